// The Kubeflow flavor: one PyTorchJob, its Master node 0 and its Workers
// nodes 1 to N-1. The training operator (>= 1.7) requires the container to be
// named "pytorch" with a port named "pytorchjob-port", makes a Service
// JOB-master-0 for the Master, and sets MASTER_ADDR, MASTER_PORT, WORLD_SIZE,
// RANK and PET_NNODES, PET_NPROC_PER_NODE (spec.nprocPerNode), PET_NODE_RANK
// (0 for the Master, index + 1 for a Worker) after the pod's own variables.
// The launcher is given node count, worker count, endpoint and restarts as
// flags, so the Master's own count holds when it differs from nprocPerNode;
// a Worker's node rank comes from PET_NODE_RANK.
#include <nlohmann/json.hpp>

#include "pod_template.h"
#include "strata/deploy/k8s_manifests.h"
#include "workload.h"

namespace strata::deploy {
namespace {

using nlohmann::ordered_json;
using std::to_string;

constexpr const char* kContainerName = "pytorch";
constexpr const char* kPyTorchJobPortName = "pytorchjob-port";
// Pods that fail are restarted in place while the restart budget lasts.
std::string restartPolicy(const K8sOptions& o) { return o.maxRestarts > 0 ? "OnFailure" : "Never"; }

// Node 0 (the Master) is given its rank; a Worker reads PET_NODE_RANK.
PodShape shapeOf(int64_t workers, const std::string& master, std::optional<int64_t> nodeRank) {
  return {kContainerName, kPyTorchJobPortName, workers, master, nodeRank};
}

ordered_json replica(const K8sOptions& o, int64_t replicas, const PodShape& shape) {
  ordered_json pod = podTemplate(o, shape);
  return {{"replicas", replicas}, {"restartPolicy", restartPolicy(o)}, {"template", pod}};
}

}  // namespace

ordered_json pyTorchJob(const K8sOptions& o, const std::string& layoutMap) {
  const std::vector<int64_t>& counts = o.workersPerNode;
  std::string master = o.name + "-master-0";
  checkHostName(master);
  ordered_json replicas = {{"Master", replica(o, 1, shapeOf(counts[0], master, 0))}};
  int64_t workerNodes = static_cast<int64_t>(counts.size()) - 1;
  if (workerNodes > 0) {
    checkHostName(o.name + "-worker-" + to_string(workerNodes - 1));
    replicas["Worker"] = replica(o, workerNodes, shapeOf(counts[1], master, std::nullopt));
  }
  ordered_json meta = objectMeta(o, o.name);
  meta["annotations"] = {{kLayoutAnnotation, layoutMap}};
  ordered_json spec = {{"nprocPerNode", to_string(counts.back())},
                       {"runPolicy", {{"backoffLimit", o.maxRestarts}}},
                       {"pytorchReplicaSpecs", replicas}};
  return {{"apiVersion", "kubeflow.org/v1"},
          {"kind", "PyTorchJob"},
          {"metadata", meta},
          {"spec", spec}};
}

}  // namespace strata::deploy
