// What a cluster's scheduler tells `strata launch` through the environment,
// used for each flag not given on the command line:
//
// - Kubeflow's PyTorchJob (torchrun's own names with a PET_ prefix):
//   PET_NPROC_PER_NODE, PET_NNODES ("N" or an elastic "MIN:MAX"), PET_NODE_RANK,
//   PET_MASTER_ADDR, PET_MASTER_PORT, PET_RDZV_ENDPOINT (HOST:PORT, preferred
//   over the two before; etcd's endpoints under the etcd backend),
//   PET_RDZV_BACKEND, PET_MAX_RESTARTS;
// - a Kubernetes Indexed Job: JOB_COMPLETION_INDEX as the node rank, plus
//   STRATA_NODE_RANK_OFFSET when a job of several replica groups (nodes of
//   different sizes) runs one Indexed Job per group.
//
// Nothing blocks; a variable that is set but malformed throws ConfigError
// naming it and its text.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>

namespace strata {

struct ClusterEnvironment {
  std::optional<int64_t> nprocPerNode, nnodes, minNodes, nodeRank, masterPort, maxRestarts;
  std::optional<std::string> masterAddr;
  // As set: what they mean depends on the backend (launch_flags.cpp reads them).
  std::optional<std::string> rdzvBackend, rdzvEndpoint;
};

using EnvironmentLookup = std::function<std::optional<std::string>(const std::string&)>;

ClusterEnvironment readClusterEnvironment(const EnvironmentLookup& lookup);

// "N" -> {N, N}; "MIN:MAX" -> {MIN, MAX}, with 1 <= MIN <= MAX; nullopt
// otherwise.
std::optional<std::pair<int64_t, int64_t>> parseNodeRange(const std::string& text);

}  // namespace strata
