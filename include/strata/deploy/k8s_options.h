// The options of `strata k8s`: the shape a training job takes on a
// Kubernetes cluster (nodes, workers per node, image, resources, restarts,
// storage), as the command's flags give them.
//
// Plain data and checks; nothing blocks. parseFlavor, workersPerNodeList and
// checkK8sOptions throw ConfigError naming the flag and the value at fault.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace strata::deploy {

// kIndexedJob: a headless Service and one Indexed Job per run of equal
// nodes, plain Kubernetes. kPyTorchJob: one Kubeflow PyTorchJob (Master and
// Workers), for clusters that run the Kubeflow training operator (>= 1.7).
enum class K8sFlavor { kIndexedJob, kPyTorchJob };

// "job" or "pytorchjob".
K8sFlavor parseFlavor(const std::string& text);

struct K8sOptions {
  std::string name = "strata";          // prefix of every object's name
  std::string namespaceName;            // empty: kubectl's current namespace
  std::string image;                    // container image holding the strata command
  std::vector<int64_t> workersPerNode;  // one count per node, in node order
  int64_t gpusPerWorker = 0;
  K8sFlavor flavor = K8sFlavor::kIndexedJob;
  int64_t maxRestarts = 0;  // launcher restarts, and pod failures the job survives
  int64_t port = 29500;     // node 0's rendezvous port (etcd: each pod's workers' store)
  // "c10d": node 0's pod serves the rendezvous, so the job needs it to live.
  // "etcd": the launchers meet in etcd at `rdzvEndpoint` (client endpoints
  // HOST:PORT[,HOST:PORT...]) under the key `runId`, each a peer, so the
  // job survives the loss of any pod, pod 0 included.
  std::string rdzvBackend = "c10d";
  std::string rdzvEndpoint;
  std::string runId;            // etcd: empty means strata k8s makes a fresh one
  std::string shmSize = "8Gi";  // memory-backed /dev/shm of a pod
  std::string cpuPerWorker;     // Kubernetes quantities; empty: none requested
  std::string memoryPerWorker;
  std::string checkpointClaim;           // an existing claim; empty: emit one
  std::string checkpointSize = "100Gi";  // of the emitted claim
  std::string storageClass;              // of the emitted claim; empty: the default
};

// The count of every node from --workers-per-node: one count for all nodes
// ("4") or one per node ("3,2", as many as `nodes`).
std::vector<int64_t> workersPerNodeList(int64_t nodes, const std::string& text);

// Refuses options no cluster could run: no nodes, a count below 1, no image,
// a malformed quantity, name or port, a rendezvous backend other than c10d
// or etcd, etcd without its endpoints (or endpoints without etcd), and for
// kPyTorchJob worker counts that are not one count for the Master and one
// for every Worker.
void checkK8sOptions(const K8sOptions& options);

// Workers of all nodes together.
int64_t worldSize(const K8sOptions& options);

}  // namespace strata::deploy
