#include "pod_template.h"

#include "quantity.h"
#include "strata/deploy/k8s_manifests.h"
#include "strata/error.h"

namespace strata::deploy {
namespace {

using nlohmann::ordered_json;
using std::to_string;

constexpr const char* kHostnameTopology = "kubernetes.io/hostname";
constexpr size_t kMaxHostName = 63;

std::vector<std::string> trainCommand(const K8sOptions& o) {
  return {"strata",         "train",     "--config",      kConfigPath, "--checkpoint-dir",
          checkpointDir(o), "--out-dir", runOutputDir(o), "--resume"};
}

std::vector<std::string> launchCommand(const K8sOptions& o, const PodShape& shape) {
  std::vector<std::string> command = {"strata",           "launch",
                                      "--nnodes",         to_string(o.workersPerNode.size()),
                                      "--nproc-per-node", to_string(shape.workers)};
  if (shape.nodeRank) command.insert(command.end(), {"--node-rank", to_string(*shape.nodeRank)});
  if (o.rdzvBackend == "etcd") {
    // The pod's workers' store listens on the port the container declares.
    command.insert(command.end(), {"--rdzv-backend", "etcd", "--rdzv-endpoint", o.rdzvEndpoint,
                                   "--rdzv-id", o.runId, "--master-port", to_string(o.port)});
  } else {
    command.insert(command.end(),
                   {"--rdzv-endpoint", shape.masterAddress + ":" + to_string(o.port)});
  }
  command.insert(command.end(), {"--max-restarts", to_string(o.maxRestarts), "--"});
  std::vector<std::string> train = trainCommand(o);
  command.insert(command.end(), train.begin(), train.end());
  return command;
}

ordered_json environment(const K8sOptions& o, const PodShape& shape) {
  ordered_json token = {
      {"name", "STRATA_JOB_TOKEN"},
      {"valueFrom", {{"secretKeyRef", {{"name", secretName(o)}, {"key", kJobTokenKey}}}}}};
  ordered_json env = ordered_json::array({token});
  for (const ordered_json& variable : shape.extraEnv) env.push_back(variable);
  return env;
}

// Requests equal limits: a training pod should get exactly what it asks for.
ordered_json resources(const K8sOptions& o, int64_t workers) {
  ordered_json amounts = ordered_json::object();
  if (!o.cpuPerWorker.empty()) amounts["cpu"] = scaledQuantity("--cpu", o.cpuPerWorker, workers);
  if (!o.memoryPerWorker.empty())
    amounts["memory"] = scaledQuantity("--memory", o.memoryPerWorker, workers);
  ordered_json limits = amounts;
  if (o.gpusPerWorker > 0) limits["nvidia.com/gpu"] = to_string(o.gpusPerWorker * workers);
  ordered_json result = ordered_json::object();
  if (!amounts.empty()) result["requests"] = amounts;
  if (!limits.empty()) result["limits"] = limits;
  return result;
}

ordered_json container(const K8sOptions& o, const PodShape& shape) {
  ordered_json port = {{"name", shape.portName}, {"containerPort", o.port}, {"protocol", "TCP"}};
  ordered_json mounts =
      ordered_json::array({{{"name", "shm"}, {"mountPath", "/dev/shm"}},
                           {{"name", "config"}, {"mountPath", kConfigDir}, {"readOnly", true}},
                           {{"name", "run"}, {"mountPath", kRunVolumeDir}}});
  ordered_json result = {{"name", shape.containerName},
                         {"image", o.image},
                         {"command", launchCommand(o, shape)},
                         {"env", environment(o, shape)},
                         {"ports", ordered_json::array({port})}};
  ordered_json limits = resources(o, shape.workers);
  if (!limits.empty()) result["resources"] = limits;
  result["volumeMounts"] = mounts;
  return result;
}

ordered_json volumes(const K8sOptions& o) {
  return ordered_json::array(
      {{{"name", "shm"}, {"emptyDir", {{"medium", "Memory"}, {"sizeLimit", o.shmSize}}}},
       {{"name", "config"}, {"configMap", {{"name", configMapName(o)}}}},
       {{"name", "run"}, {"persistentVolumeClaim", {{"claimName", claimName(o)}}}}});
}

// No two pods of the job on one cluster node: each pod is a whole node of
// the job, with its own GPUs, memory and network.
ordered_json onePodPerNode(const K8sOptions& o) {
  ordered_json term = {{"labelSelector", {{"matchLabels", jobLabels(o)}}},
                       {"topologyKey", kHostnameTopology}};
  return {{"podAntiAffinity",
           {{"requiredDuringSchedulingIgnoredDuringExecution", ordered_json::array({term})}}}};
}

}  // namespace

std::string secretName(const K8sOptions& o) { return o.name + "-token"; }
std::string configMapName(const K8sOptions& o) { return o.name + "-config"; }
std::string claimName(const K8sOptions& o) {
  return o.checkpointClaim.empty() ? o.name + "-checkpoints" : o.checkpointClaim;
}

void checkHostName(const std::string& host) {
  if (host.size() > kMaxHostName)
    throw ConfigError("--name is too long: pod host name '" + host + "' has " +
                      to_string(host.size()) + " characters, Kubernetes allows " +
                      to_string(kMaxHostName));
}

std::string checkpointDir(const K8sOptions& o) {
  return std::string(kRunVolumeDir) + "/" + o.name + "/checkpoints";
}
std::string runOutputDir(const K8sOptions& o) {
  return std::string(kRunVolumeDir) + "/" + o.name + "/run";
}

ordered_json jobLabels(const K8sOptions& o) {
  return {{"app.kubernetes.io/name", "strata"}, {"app.kubernetes.io/instance", o.name}};
}

ordered_json objectMeta(const K8sOptions& o, const std::string& name) {
  ordered_json meta = {{"name", name}};
  if (!o.namespaceName.empty()) meta["namespace"] = o.namespaceName;
  meta["labels"] = jobLabels(o);
  return meta;
}

ordered_json podTemplate(const K8sOptions& o, const PodShape& shape) {
  ordered_json spec = {{"affinity", onePodPerNode(o)},
                       {"containers", ordered_json::array({container(o, shape)})},
                       {"volumes", volumes(o)}};
  return {{"metadata", {{"labels", jobLabels(o)}}}, {"spec", spec}};
}

}  // namespace strata::deploy
