// The manifests of `strata k8s` as data: what each object says, for even and
// uneven nodes and both flavors, and what is refused.
#include "strata/deploy/k8s_manifests.h"

#include <gtest/gtest.h>

#include "k8s_test_util.h"
#include "strata/deploy/layout_map.h"

namespace strata::deploy {
namespace {

std::vector<ordered_json> build(const K8sJob& job) { return buildK8sManifests(job); }

std::vector<std::string> kinds(const std::vector<ordered_json>& manifests) {
  std::vector<std::string> result;
  for (const ordered_json& m : manifests) result.push_back(m["kind"]);
  return result;
}

TEST(K8sManifests, EmitsSecretConfigClaimServiceAndJobInTheOrderToCreateThem) {
  std::vector<ordered_json> manifests = build(jobOf({4, 4}, configText(2, 2, 2)));
  EXPECT_EQ(
      kinds(manifests),
      (std::vector<std::string>{"Secret", "ConfigMap", "PersistentVolumeClaim", "Service", "Job"}));
  for (const ordered_json& m : manifests) {
    EXPECT_EQ(m["metadata"]["labels"]["app.kubernetes.io/instance"], "gpt") << m["kind"];
    EXPECT_FALSE(m["metadata"].contains("namespace"));
  }
}

TEST(K8sManifests, IndexedJobRunsOnePodPerNodeNamedUnderTheHeadlessService) {
  K8sJob job = jobOf({4, 4}, configText(2, 2, 2));
  job.options.maxRestarts = 3;
  std::vector<ordered_json> manifests = build(job);
  ordered_json service = ofKind(manifests, "Service").at(0);
  ordered_json indexed = ofKind(manifests, "Job").at(0);
  EXPECT_EQ(service["metadata"]["name"], "gpt");
  EXPECT_EQ(service["spec"]["clusterIP"], "None");
  EXPECT_EQ(service["spec"]["publishNotReadyAddresses"], true);
  EXPECT_EQ(service["spec"]["selector"], indexed["spec"]["template"]["metadata"]["labels"]);
  EXPECT_EQ(indexed["metadata"]["name"], "gpt");
  const ordered_json& spec = indexed["spec"];
  EXPECT_EQ(spec["completionMode"], "Indexed");
  EXPECT_EQ(spec["completions"], 2);
  EXPECT_EQ(spec["parallelism"], 2);
  EXPECT_EQ(spec["backoffLimit"], 3);
  const ordered_json& pod = spec["template"]["spec"];
  EXPECT_EQ(pod["subdomain"], "gpt");
  EXPECT_EQ(pod["restartPolicy"], "Never");
  const ordered_json& term =
      pod["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0];
  EXPECT_EQ(term["topologyKey"], "kubernetes.io/hostname");
  EXPECT_EQ(term["labelSelector"]["matchLabels"], service["spec"]["selector"]);
}

TEST(K8sManifests, PodLaunchesItsWorkersOverTheMountedConfigAndResumesFromTheClaim) {
  K8sJob job = jobOf({4, 4}, configText(2, 2, 2));
  job.options.maxRestarts = 2;
  job.options.port = 31000;
  ordered_json container = onlyContainer(ofKind(build(job), "Job").at(0)["spec"]["template"]);
  EXPECT_EQ(container["image"], "registry.example/strata:1");
  EXPECT_EQ(commandOf(container), (std::vector<std::string>{"strata",
                                                            "launch",
                                                            "--nnodes",
                                                            "2",
                                                            "--nproc-per-node",
                                                            "4",
                                                            "--rdzv-endpoint",
                                                            "gpt-0.gpt:31000",
                                                            "--max-restarts",
                                                            "2",
                                                            "--",
                                                            "strata",
                                                            "train",
                                                            "--config",
                                                            "/etc/strata/train.toml",
                                                            "--checkpoint-dir",
                                                            "/var/lib/strata/gpt/checkpoints",
                                                            "--out-dir",
                                                            "/var/lib/strata/gpt/run",
                                                            "--resume"}));
  EXPECT_EQ(
      container["ports"],
      ordered_json::parse(R"([{"name":"rendezvous","containerPort":31000,"protocol":"TCP"}])"));
  EXPECT_EQ(named(container["env"], "STRATA_NODE_RANK_OFFSET")["value"], "0");
}

TEST(K8sManifests, UnderEtcdEveryPodIsAPeerAndNamesNoMaster) {
  for (K8sFlavor flavor : {K8sFlavor::kIndexedJob, K8sFlavor::kPyTorchJob}) {
    K8sJob job = jobOf({4, 4}, configText(2, 2, 2));
    job.options.flavor = flavor;
    job.options.rdzvBackend = "etcd";
    job.options.rdzvEndpoint = "etcd.infra:2379";
    job.options.runId = "gpt-1a2b3c4d";
    job.options.port = 31000;
    std::vector<ordered_json> manifests = build(job);
    ordered_json workload = manifests.back();
    ordered_json pod = flavor == K8sFlavor::kIndexedJob
                           ? workload["spec"]["template"]
                           : workload["spec"]["pytorchReplicaSpecs"]["Worker"]["template"];
    std::vector<std::string> command = commandOf(onlyContainer(pod));
    std::vector<std::string> head(command.begin() + 6, command.begin() + 14);
    if (flavor == K8sFlavor::kIndexedJob) {
      EXPECT_EQ(head, (std::vector<std::string>{"--rdzv-backend", "etcd", "--rdzv-endpoint",
                                                "etcd.infra:2379", "--rdzv-id", "gpt-1a2b3c4d",
                                                "--master-port", "31000"}))
          << workload.dump();
    }
    std::string text = workload.dump();
    EXPECT_NE(text.find("\"--rdzv-backend\",\"etcd\""), std::string::npos) << text;
    EXPECT_EQ(text.find("-0.gpt:"), std::string::npos) << text;
    EXPECT_EQ(text.find("master-0:"), std::string::npos) << text;
  }
}

TEST(K8sManifests, JobTokenComesFromTheSecretAndAppearsNowhereElse) {
  std::vector<ordered_json> manifests = build(jobOf({4, 4}, configText(2, 2, 2)));
  ordered_json secret = ofKind(manifests, "Secret").at(0);
  EXPECT_EQ(secret["metadata"]["name"], "gpt-token");
  EXPECT_EQ(secret["type"], "Opaque");
  EXPECT_EQ(secret["stringData"]["token"], "0123abcd-token");
  ordered_json container = onlyContainer(ofKind(manifests, "Job").at(0)["spec"]["template"]);
  EXPECT_EQ(named(container["env"], "STRATA_JOB_TOKEN"),
            ordered_json::parse(R"({"name":"STRATA_JOB_TOKEN",
              "valueFrom":{"secretKeyRef":{"name":"gpt-token","key":"token"}}})"));
  for (const ordered_json& m : manifests) {
    if (m["kind"] == "Secret") continue;
    EXPECT_EQ(m.dump().find("0123abcd-token"), std::string::npos) << m["kind"];
  }
}

TEST(K8sManifests, VolumesGiveMemoryBackedShmTheConfigAndTheClaim) {
  K8sJob job = jobOf({4, 4}, configText(2, 2, 2));
  job.options.shmSize = "16Gi";
  std::vector<ordered_json> manifests = build(job);
  ordered_json pod = ofKind(manifests, "Job").at(0)["spec"]["template"];
  const ordered_json& volumes = pod["spec"]["volumes"];
  EXPECT_EQ(named(volumes, "shm")["emptyDir"],
            ordered_json::parse(R"({"medium":"Memory","sizeLimit":"16Gi"})"));
  EXPECT_EQ(named(volumes, "config")["configMap"]["name"], "gpt-config");
  EXPECT_EQ(named(volumes, "run")["persistentVolumeClaim"]["claimName"], "gpt-checkpoints");
  const ordered_json& mounts = onlyContainer(pod)["volumeMounts"];
  EXPECT_EQ(named(mounts, "shm")["mountPath"], "/dev/shm");
  EXPECT_EQ(named(mounts, "config")["mountPath"], "/etc/strata");
  EXPECT_EQ(named(mounts, "config")["readOnly"], true);
  EXPECT_EQ(named(mounts, "run")["mountPath"], "/var/lib/strata");
  ordered_json claim = ofKind(manifests, "PersistentVolumeClaim").at(0);
  EXPECT_EQ(claim["metadata"]["name"], "gpt-checkpoints");
  EXPECT_EQ(claim["spec"]["accessModes"], ordered_json::parse(R"(["ReadWriteMany"])"));
  EXPECT_EQ(claim["spec"]["resources"]["requests"]["storage"], "100Gi");
  EXPECT_FALSE(claim["spec"].contains("storageClassName"));
}

TEST(K8sManifests, ConfigMapDeliversTheConfigAsWritten) {
  std::string text = "# my run\n" + configText(2, 2, 2);
  ordered_json configMap = ofKind(build(jobOf({4, 4}, text)), "ConfigMap").at(0);
  EXPECT_EQ(configMap["metadata"]["name"], "gpt-config");
  EXPECT_EQ(configMap["data"], (ordered_json{{"train.toml", text}}));
}

TEST(K8sManifests, ResourcesAreTheWorkersOfThePodTimesEachWorkersShare) {
  K8sJob job = jobOf({3, 3, 2}, configText(2, 4, 1));
  job.options.cpuPerWorker = "1500m";
  job.options.memoryPerWorker = "2.5Gi";
  job.options.gpusPerWorker = 2;
  std::vector<ordered_json> jobs = ofKind(build(job), "Job");
  ordered_json three = onlyContainer(jobs.at(0)["spec"]["template"])["resources"];
  ordered_json two = onlyContainer(jobs.at(1)["spec"]["template"])["resources"];
  EXPECT_EQ(three["requests"], ordered_json::parse(R"({"cpu":"4500m","memory":"7.5Gi"})"));
  EXPECT_EQ(three["limits"],
            ordered_json::parse(R"({"cpu":"4500m","memory":"7.5Gi","nvidia.com/gpu":"6"})"));
  EXPECT_EQ(two["limits"],
            ordered_json::parse(R"({"cpu":"3000m","memory":"5Gi","nvidia.com/gpu":"4"})"));
}

TEST(K8sManifests, NoResourcesUnlessAskedFor) {
  ordered_json container = onlyContainer(
      ofKind(build(jobOf({4, 4}, configText(2, 2, 2))), "Job").at(0)["spec"]["template"]);
  EXPECT_FALSE(container.contains("resources"));
}

TEST(K8sManifests, UnevenNodesRunOneJobPerGroupWithTheGroupsFirstNodeAsOffset) {
  K8sJob job = jobOf({3, 3, 2}, configText(2, 4, 1));
  std::vector<ordered_json> manifests = build(job);
  std::vector<ordered_json> jobs = ofKind(manifests, "Job");
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(ofKind(manifests, "Service").size(), 1u);
  struct Expected {
    const char* name;
    int pods;
    const char* workers;
    const char* offset;
  };
  std::vector<Expected> expected = {{"gpt-g0", 2, "3", "0"}, {"gpt-g1", 1, "2", "2"}};
  for (size_t g = 0; g < jobs.size(); ++g) {
    const ordered_json& spec = jobs[g]["spec"];
    EXPECT_EQ(jobs[g]["metadata"]["name"], expected[g].name);
    EXPECT_EQ(spec["completions"], expected[g].pods);
    EXPECT_EQ(spec["parallelism"], expected[g].pods);
    EXPECT_EQ(spec["template"]["spec"]["subdomain"], "gpt");
    ordered_json container = onlyContainer(spec["template"]);
    std::vector<std::string> command = commandOf(container);
    EXPECT_EQ(command.at(3), "3") << "--nnodes is the whole job's";
    EXPECT_EQ(command.at(5), expected[g].workers) << "--nproc-per-node is the group's";
    EXPECT_EQ(command.at(7), "gpt-g0-0.gpt:29500") << "node 0 is pod 0 of the first group";
    EXPECT_EQ(named(container["env"], "STRATA_NODE_RANK_OFFSET")["value"], expected[g].offset);
  }
}

TEST(K8sManifests, ExistingClaimIsMountedAndNotEmitted) {
  K8sJob job = jobOf({4, 4}, configText(2, 2, 2));
  job.options.checkpointClaim = "shared-checkpoints";
  std::vector<ordered_json> manifests = build(job);
  EXPECT_TRUE(ofKind(manifests, "PersistentVolumeClaim").empty());
  ordered_json volumes = ofKind(manifests, "Job").at(0)["spec"]["template"]["spec"]["volumes"];
  EXPECT_EQ(named(volumes, "run")["persistentVolumeClaim"]["claimName"], "shared-checkpoints");
}

TEST(K8sManifests, EmittedClaimTakesSizeAndStorageClass) {
  K8sJob job = jobOf({4, 4}, configText(2, 2, 2));
  job.options.checkpointSize = "2Ti";
  job.options.storageClass = "nfs";
  ordered_json claim = ofKind(build(job), "PersistentVolumeClaim").at(0);
  EXPECT_EQ(claim["spec"]["resources"]["requests"]["storage"], "2Ti");
  EXPECT_EQ(claim["spec"]["storageClassName"], "nfs");
}

TEST(K8sManifests, NamespaceIsSetOnEveryObject) {
  K8sJob job = jobOf({4, 4}, configText(2, 2, 2));
  job.options.namespaceName = "research";
  for (const ordered_json& m : build(job)) EXPECT_EQ(m["metadata"]["namespace"], "research");
}

TEST(K8sManifests, EveryJobIsAnnotatedWithTheLayoutMap) {
  K8sJob job = jobOf({3, 3, 2}, configText(2, 4, 1));
  train::ParallelConfig parallel;
  parallel.pp = 2;
  parallel.dp = 4;
  parallel.tp = 1;
  ordered_json expected = layoutMap(parallel, {3, 3, 2});
  for (const ordered_json& m : ofKind(build(job), "Job")) {
    std::string annotation = m["metadata"]["annotations"][kLayoutAnnotation];
    EXPECT_EQ(ordered_json::parse(annotation), expected);
  }
}

TEST(K8sManifests, PyTorchJobHasTheMasterAsNodeZeroAndWorkersForTheOperator) {
  K8sJob job = jobOf({4, 4, 4, 4}, configText(2, 4, 2));
  job.options.flavor = K8sFlavor::kPyTorchJob;
  job.options.maxRestarts = 2;
  std::vector<ordered_json> manifests = build(job);
  EXPECT_EQ(kinds(manifests), (std::vector<std::string>{"Secret", "ConfigMap",
                                                        "PersistentVolumeClaim", "PyTorchJob"}));
  ordered_json pytorch = manifests.back();
  EXPECT_EQ(pytorch["apiVersion"], "kubeflow.org/v1");
  EXPECT_EQ(pytorch["spec"]["nprocPerNode"], "4");
  EXPECT_EQ(pytorch["spec"]["runPolicy"]["backoffLimit"], 2);
  EXPECT_TRUE(pytorch["metadata"]["annotations"].contains(kLayoutAnnotation));
  const ordered_json& replicas = pytorch["spec"]["pytorchReplicaSpecs"];
  EXPECT_EQ(replicas["Master"]["replicas"], 1);
  EXPECT_EQ(replicas["Worker"]["replicas"], 3);
  for (const char* type : {"Master", "Worker"}) {
    EXPECT_EQ(replicas[type]["restartPolicy"], "OnFailure");
    ordered_json container = onlyContainer(replicas[type]["template"]);
    EXPECT_EQ(container["name"], "pytorch") << "the operator looks for this container";
    EXPECT_EQ(container["ports"][0]["name"], "pytorchjob-port") << "and this port";
    EXPECT_EQ(named(container["env"], "STRATA_JOB_TOKEN")["valueFrom"]["secretKeyRef"]["name"],
              "gpt-token");
  }
  std::vector<std::string> master = commandOf(onlyContainer(replicas["Master"]["template"]));
  std::vector<std::string> worker = commandOf(onlyContainer(replicas["Worker"]["template"]));
  EXPECT_EQ(std::vector<std::string>(master.begin(), master.begin() + 12),
            (std::vector<std::string>{"strata", "launch", "--nnodes", "4", "--nproc-per-node", "4",
                                      "--node-rank", "0", "--rdzv-endpoint", "gpt-master-0:29500",
                                      "--max-restarts", "2"}));
  EXPECT_EQ(
      std::vector<std::string>(worker.begin(), worker.begin() + 10),
      (std::vector<std::string>{"strata", "launch", "--nnodes", "4", "--nproc-per-node", "4",
                                "--rdzv-endpoint", "gpt-master-0:29500", "--max-restarts", "2"}))
      << "a Worker's node rank comes from the operator's PET_NODE_RANK";
}

TEST(K8sManifests, PyTorchJobGivesTheMasterItsOwnWorkerCount) {
  K8sJob job = jobOf({4, 2, 2}, configText(2, 2, 2));
  job.options.flavor = K8sFlavor::kPyTorchJob;
  ordered_json pytorch = ofKind(build(job), "PyTorchJob").at(0);
  const ordered_json& replicas = pytorch["spec"]["pytorchReplicaSpecs"];
  EXPECT_EQ(commandOf(onlyContainer(replicas["Master"]["template"])).at(5), "4");
  EXPECT_EQ(commandOf(onlyContainer(replicas["Worker"]["template"])).at(5), "2");
  EXPECT_EQ(replicas["Worker"]["replicas"], 2);
  EXPECT_EQ(pytorch["spec"]["nprocPerNode"], "2");
  EXPECT_EQ(replicas["Master"]["restartPolicy"], "Never") << "no restarts asked for";
}

TEST(K8sManifests, PyTorchJobOfOneNodeHasOnlyTheMaster) {
  K8sJob job = jobOf({8}, configText(2, 2, 2));
  job.options.flavor = K8sFlavor::kPyTorchJob;
  ordered_json pytorch = ofKind(build(job), "PyTorchJob").at(0);
  EXPECT_FALSE(pytorch["spec"]["pytorchReplicaSpecs"].contains("Worker"));
}

TEST(K8sManifests, RefusesALayoutThatDoesNotMultiplyToTheWorld) {
  expectErrorNaming(
      [] {
        build(jobOf({3, 2}, configText(2, 1, 2)));
      },
      {"train.toml", "2 nodes with 3,2 workers (world size 5)",
       "world size 5 != pp 2 x dp 1 x tp 2"});
}

// 3 + 3 workers with tp 2: ranks 2 and 3 would be a tp pair across nodes.
TEST(K8sManifests, RefusesTensorParallelGroupsSpanningNodes) {
  expectErrorNaming(
      [] {
        build(jobOf({3, 3}, configText(3, 1, 2)));
      },
      {"2 nodes with 3,3 workers", "ranks 2-3 span node 0 (ranks 0-2) and node 1"});
  EXPECT_NO_THROW(build(jobOf({4, 2}, configText(3, 1, 2))));
}

TEST(K8sManifests, RefusesEveryOtherProblemOfTheConfig) {
  std::string text = configText(1, 1, 2);
  text.replace(text.find("heads = 4"), 9, "heads = 3");
  expectErrorNaming([&] { build(jobOf({2}, text)); }, {"model.heads 3 is not divisible by tp 2"});
}

TEST(K8sManifests, RefusesAConfigThatDoesNotParseNamingTheFile) {
  expectErrorNaming([] { build(jobOf({2}, "[model]\nlayerz = 4\n")); }, {"train.toml:2", "layerz"});
}

TEST(K8sManifests, RefusesANameThatMakesPodHostNamesTooLong) {
  K8sJob job = jobOf({4, 4}, configText(2, 2, 2));
  job.options.name = std::string(62, 'a');
  expectErrorNaming([&] { build(job); }, {"--name is too long", std::string(62, 'a') + "-1", "63"});
  job.options.flavor = K8sFlavor::kPyTorchJob;
  job.options.name = std::string(55, 'b');
  expectErrorNaming([&] { build(job); }, {std::string(55, 'b') + "-master-0"});
}

TEST(K8sManifests, RefusesMoreRanksThanAnAnnotationHolds) {
  K8sJob job = jobOf({100000}, configText(1, 100000, 1));
  expectErrorNaming([&] { build(job); }, {"layout map of 100000 ranks", "262144 bytes"});
}

TEST(K8sManifests, ListHoldsEveryManifest) {
  std::vector<ordered_json> manifests = build(jobOf({4, 4}, configText(2, 2, 2)));
  ordered_json list = k8sList(manifests);
  EXPECT_EQ(list["apiVersion"], "v1");
  EXPECT_EQ(list["kind"], "List");
  EXPECT_EQ(list["items"], ordered_json(manifests));
}

}  // namespace
}  // namespace strata::deploy
