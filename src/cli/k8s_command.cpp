#include "k8s_command.h"

#include <CLI/CLI.hpp>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>
#include <sstream>

#include "strata/config/config_file.h"
#include "strata/deploy/job_token.h"
#include "strata/deploy/k8s_manifests.h"
#include "strata/error.h"
#include "strata/util/cli_flags.h"
#include "yaml_text.h"

namespace strata {
namespace {

using deploy::K8sOptions;

struct K8sFlags {
  K8sOptions options;
  std::string configPath, workersPerNode, flavor = "job", output = "yaml";
  int64_t nodes = 0;
};

void addShapeFlags(CLI::App& command, K8sFlags& f) {
  K8sOptions& o = f.options;
  addTextFlag(command, "--config", &f.configPath, "the `strata train` config (TOML) to run")
      ->required();
  addIntFlag(command, "--nodes", &f.nodes, "pods, one per cluster node", 1, 100000)->required();
  addTextFlag(command, "--workers-per-node", &f.workersPerNode,
              "workers of every node (4), or of each node (3,2: one count per node)")
      ->required();
  addTextFlag(command, "--image", &o.image, "container image with the strata command")->required();
  addIntFlag(command, "--gpus-per-worker", &o.gpusPerWorker,
             "GPUs per worker; a pod asks for workers x this many nvidia.com/gpu", 0);
  addTextFlag(command, "--name", &o.name, "name of the job and prefix of its objects");
  addTextFlag(command, "--flavor", &f.flavor,
              "job (a headless Service and Indexed Jobs) or pytorchjob (Kubeflow, operator >= "
              "1.7)");
  addIntFlag(command, "--max-restarts", &o.maxRestarts,
             "restarts of the workers, and pod failures the job survives", 0);
}

void addPlacementFlags(CLI::App& command, K8sFlags& f) {
  K8sOptions& o = f.options;
  addTextFlag(command, "--namespace", &o.namespaceName,
              "namespace of every object (unset: kubectl's current one)");
  addIntFlag(command, "--port", &o.port,
             "rendezvous port of node 0 (etcd: of each pod's workers' store)", 1, 65535);
  addTextFlag(command, "--rdzv-backend", &o.rdzvBackend,
              "c10d (pod 0 serves the rendezvous) or etcd (the pods meet in etcd as peers, so "
              "the job survives the loss of any pod)");
  addTextFlag(command, "--rdzv-endpoint", &o.rdzvEndpoint,
              "etcd: its client endpoints HOST:PORT[,HOST:PORT...] as the pods reach them");
  addTextFlag(command, "--rdzv-id", &o.runId,
              "etcd: the job's key (unset: NAME-<8 random hex digits>, fresh on every run)");
  addTextFlag(command, "--shm-size", &o.shmSize, "memory-backed /dev/shm of a pod");
  addTextFlag(command, "--cpu", &o.cpuPerWorker,
              "CPUs per worker, requested and limited (e.g. 4 or 500m; unset: none)");
  addTextFlag(command, "--memory", &o.memoryPerWorker,
              "memory per worker, requested and limited (e.g. 16Gi; unset: none)");
  addTextFlag(command, "--checkpoint-claim", &o.checkpointClaim,
              "existing ReadWriteMany claim for checkpoints (unset: one is emitted)");
  addTextFlag(command, "--checkpoint-size", &o.checkpointSize, "size of the emitted claim");
  addTextFlag(command, "--storage-class", &o.storageClass,
              "storage class of the emitted claim (unset: the cluster's default)");
  addTextFlag(command, "--output", &f.output, "yaml, or json for one Kubernetes List");
}

std::string readConfigText(const std::string& path) {
  if (std::filesystem::is_directory(path))
    throw ConfigError("config file '" + path + "' is a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError("config file '" + path + "' cannot be opened");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

deploy::K8sJob jobOf(const K8sFlags& f) {
  if (f.output != "yaml" && f.output != "json")
    throw ConfigError("--output must be yaml or json, got '" + f.output + "'");
  deploy::K8sJob job;
  job.options = f.options;
  job.options.workersPerNode = deploy::workersPerNodeList(f.nodes, f.workersPerNode);
  job.options.flavor = deploy::parseFlavor(f.flavor);
  job.configPath = f.configPath;
  job.configText = readConfigText(f.configPath);
  job.jobToken = deploy::generateJobToken();
  // A run id that ended is refused by etcd until its keys expire, so each
  // printed job gets its own; drawn apart from the token, which stays secret.
  if (job.options.rdzvBackend == "etcd" && job.options.runId.empty())
    job.options.runId = job.options.name + "-" + deploy::generateJobToken().substr(0, 8);
  return job;
}

// A restarted job resumes from its latest checkpoint; with none saved
// before the end, it starts over.
void noteCheckpoints(const deploy::K8sJob& job, std::ostream& err) {
  train::TrainConfig config;
  train::applyConfigToml(job.configText, job.configPath, config);
  if (config.checkpoint.every == 0)
    err << "strata k8s: note: checkpoint.every is 0 in " << job.configPath
        << ", so checkpoints are saved only at the end: a job restarted after a failure "
           "starts over\n";
}

int run(const K8sFlags& f, std::ostream& out, std::ostream& err) {
  deploy::K8sJob job = jobOf(f);
  std::vector<nlohmann::ordered_json> manifests = deploy::buildK8sManifests(job);
  noteCheckpoints(job, err);
  if (f.output == "json")
    out << deploy::k8sList(manifests).dump(2, ' ', false,
                                           nlohmann::ordered_json::error_handler_t::replace)
        << "\n";
  else
    out << yamlStream(manifests);
  return 0;
}

}  // namespace

Subcommand addK8sCommand(CLI::App& strata, std::ostream& out, std::ostream& err) {
  CLI::App* command = strata.add_subcommand(
      "k8s", "print the Kubernetes manifests that run a training config on a cluster");
  command->footer(
      "  strata k8s --config train.toml --nodes 2 --workers-per-node 4 --image REGISTRY/strata \\\n"
      "      --gpus-per-worker 1 | kubectl apply -f -");
  auto flags = std::make_shared<K8sFlags>();
  addShapeFlags(*command, *flags);
  addPlacementFlags(*command, *flags);
  return {command, [flags, &out, &err] { return run(*flags, out, err); }};
}

}  // namespace strata
