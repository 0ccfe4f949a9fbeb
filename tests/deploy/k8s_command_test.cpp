// `strata k8s` run as the binary runs it: flags to manifests, JSON output,
// a fresh token every time, and bad input refused with exit code 2.
#include "k8s_command.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "k8s_test_util.h"

namespace strata {
namespace {

using nlohmann::ordered_json;

struct Outcome {
  int code;
  std::string out, err;
};

Outcome k8s(std::vector<std::string> args) {
  std::ostringstream out, err;
  CLI::App strata("", "strata");
  Subcommand command = addK8sCommand(strata, out, err);
  args.insert(args.begin(), "k8s");
  int code = runCommandLine(strata, {command}, args, out, err);
  return {code, out.str(), err.str()};
}

// A config file for pp x dp x tp, of the test's own, removed with the fixture.
class K8sCommand : public ::testing::Test {
 protected:
  void SetUp() override { write(deploy::configText(2, 2, 2)); }
  void TearDown() override { std::remove(path_.c_str()); }

  void write(const std::string& text) { std::ofstream(path_) << text; }

  std::vector<std::string> args(const std::string& nodes, const std::string& workers) const {
    return {"--config",           path_,   "--nodes", nodes,
            "--workers-per-node", workers, "--image", "registry.example/strata:1"};
  }

  // One file per test: ctest runs the fixture's tests side by side, and one
  // removing a shared file failed another mid-run.
  std::string path_ = ::testing::TempDir() + "k8s_command_test_" +
                      ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".toml";
};

TEST_F(K8sCommand, PrintsOneYamlDocumentPerManifest) {
  Outcome run = k8s(args("2", "4"));
  ASSERT_EQ(run.code, 0) << run.err;
  std::vector<YAML::Node> documents = YAML::LoadAll(run.out);
  std::vector<std::string> kinds;
  for (const YAML::Node& document : documents) kinds.push_back(document["kind"].as<std::string>());
  EXPECT_EQ(kinds, (std::vector<std::string>{"Secret", "ConfigMap", "PersistentVolumeClaim",
                                             "Service", "Job"}));
  EXPECT_EQ(run.err, "") << "checkpoints are saved every 10 steps: nothing to note";
}

TEST_F(K8sCommand, JsonOutputIsOneList) {
  std::vector<std::string> a = args("3", "4,2,2");
  a.insert(a.end(), {"--output", "json"});
  Outcome run = k8s(a);
  ASSERT_EQ(run.code, 0) << run.err;
  ordered_json list = ordered_json::parse(run.out);
  EXPECT_EQ(list["kind"], "List");
  EXPECT_EQ(list["items"].size(), 6u) << "Secret, ConfigMap, claim, Service and two Jobs";
}

TEST_F(K8sCommand, EveryRunHasAFreshRandomToken) {
  auto token = [&] {
    std::vector<std::string> a = args("2", "4");
    a.insert(a.end(), {"--output", "json"});
    return ordered_json::parse(k8s(a).out)["items"][0]["stringData"]["token"].get<std::string>();
  };
  std::string first = token();
  EXPECT_EQ(first.size(), 64u);
  EXPECT_EQ(first.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_NE(first, token());
}

TEST_F(K8sCommand, FlagsReachTheManifests) {
  std::vector<std::string> a = args("4", "2");
  a.insert(a.end(), {"--flavor",
                     "pytorchjob",
                     "--name",
                     "big",
                     "--namespace",
                     "ml",
                     "--max-restarts",
                     "3",
                     "--port",
                     "23456",
                     "--shm-size",
                     "32Gi",
                     "--cpu",
                     "8",
                     "--memory",
                     "64Gi",
                     "--gpus-per-worker",
                     "1",
                     "--checkpoint-claim",
                     "ckpt",
                     "--output",
                     "json"});
  Outcome run = k8s(a);
  ASSERT_EQ(run.code, 0) << run.err;
  ordered_json job = ordered_json::parse(run.out)["items"].back();
  EXPECT_EQ(job["kind"], "PyTorchJob");
  EXPECT_EQ(job["metadata"]["namespace"], "ml");
  const ordered_json& pod = job["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"];
  const ordered_json& container = pod["containers"][0];
  EXPECT_EQ(container["resources"]["limits"],
            ordered_json::parse(R"({"cpu":"16","memory":"128Gi","nvidia.com/gpu":"2"})"));
  EXPECT_EQ(container["command"][7], "big-master-0:23456");
  EXPECT_EQ(container["command"][9], "3");
  EXPECT_EQ(deploy::named(pod["volumes"], "shm")["emptyDir"]["sizeLimit"], "32Gi");
  EXPECT_EQ(deploy::named(pod["volumes"], "run")["persistentVolumeClaim"]["claimName"], "ckpt");
}

// Under etcd every pod meets the others in etcd; each run of the command
// gets a fresh run id (an ended one is refused until its keys expire).
TEST_F(K8sCommand, EtcdPodsMeetInEtcdUnderAFreshRunId) {
  std::vector<std::string> a = args("2", "4");
  a.insert(a.end(), {"--name", "big", "--rdzv-backend", "etcd", "--rdzv-endpoint",
                     "etcd-0.etcd:2379,etcd-1.etcd:2379", "--output", "json"});
  std::vector<std::string> runIds;
  for (int run = 0; run < 2; ++run) {
    Outcome outcome = k8s(a);
    ASSERT_EQ(outcome.code, 0) << outcome.err;
    ordered_json job = ordered_json::parse(outcome.out)["items"].back();
    std::vector<std::string> command =
        job["spec"]["template"]["spec"]["containers"][0]["command"].get<std::vector<std::string>>();
    auto after = [&](const std::string& flag) {
      auto at = std::find(command.begin(), command.end(), flag);
      return at == command.end() || at + 1 == command.end() ? std::string() : *(at + 1);
    };
    EXPECT_EQ(after("--rdzv-backend"), "etcd");
    EXPECT_EQ(after("--rdzv-endpoint"), "etcd-0.etcd:2379,etcd-1.etcd:2379");
    runIds.push_back(after("--rdzv-id"));
    EXPECT_EQ(runIds.back().rfind("big-", 0), 0u) << runIds.back();
    EXPECT_EQ(runIds.back().size(), 12u) << runIds.back();
  }
  EXPECT_NE(runIds[0], runIds[1]);
  a.insert(a.end(), {"--rdzv-id", "mine"});
  Outcome chosen = k8s(a);
  ASSERT_EQ(chosen.code, 0) << chosen.err;
  EXPECT_NE(chosen.out.find("\"mine\""), std::string::npos);
}

TEST_F(K8sCommand, NotesThatCheckpointsOnlyAtTheEndMeanARestartStartsOver) {
  std::string text = deploy::configText(2, 2, 2);
  write(text.substr(0, text.find("[checkpoint]")));
  Outcome run = k8s(args("2", "4"));
  EXPECT_EQ(run.code, 0) << run.err;
  EXPECT_NE(run.err.find("note: checkpoint.every is 0"), std::string::npos) << run.err;
}

TEST_F(K8sCommand, BadInputExitsWithCodeTwoNamingTheValues) {
  struct Case {
    std::vector<std::string> extra;
    std::string nodes, workers, message;
  };
  std::vector<Case> cases = {
      {{}, "0", "4", "--nodes must be at least 1, got 0"},
      {{}, "3", "3,2", "--workers-per-node 3,2 gives 2 counts for --nodes 3"},
      {{}, "2", "3,2", "world size 5 != pp 2 x dp 2 x tp 2"},
      {{}, "2", "4,0", "--workers-per-node '4,0'"},
      {{"--image", ""}, "2", "4", "--image is required"},
      {{"--flavor", "pytorchjob"}, "3", "4,3,1", "gives the Workers 3,1"},
      {{"--flavor", "slurm"}, "2", "4", "--flavor must be job or pytorchjob, got 'slurm'"},
      {{"--output", "xml"}, "2", "4", "--output must be yaml or json, got 'xml'"},
      {{"--rdzv-backend", "zk"}, "2", "4", "--rdzv-backend must be c10d or etcd, got 'zk'"},
      {{"--rdzv-backend", "etcd"}, "2", "4", "--rdzv-backend etcd needs --rdzv-endpoint"},
      {{"--rdzv-backend", "etcd", "--rdzv-endpoint", "etcd"},
       "2",
       "4",
       "--rdzv-endpoint 'etcd' is not etcd's client endpoints"},
      {{"--rdzv-endpoint", "etcd:2379"}, "2", "4", "but --rdzv-backend is c10d"},
      {{"--config", "/no/such.toml"}, "2", "4", "'/no/such.toml' cannot be opened"}};
  for (const Case& c : cases) {
    std::vector<std::string> a = args(c.nodes, c.workers);
    a.insert(a.end(), c.extra.begin(), c.extra.end());
    Outcome run = k8s(a);
    EXPECT_EQ(run.code, 2) << c.message;
    EXPECT_NE(run.err.find(c.message), std::string::npos) << run.err;
    EXPECT_EQ(run.out, "");
  }
}

TEST_F(K8sCommand, MissingRequiredFlagsAreNamed) {
  Outcome run = k8s({"--config", path_, "--nodes", "2", "--workers-per-node", "4"});
  EXPECT_EQ(run.code, 2);
  EXPECT_NE(run.err.find("--image is required"), std::string::npos) << run.err;
}

}  // namespace
}  // namespace strata
