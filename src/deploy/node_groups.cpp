#include "strata/deploy/node_groups.h"

namespace strata::deploy {

std::vector<NodeGroup> nodeGroups(const std::vector<int64_t>& workersPerNode) {
  std::vector<NodeGroup> groups;
  int64_t rank = 0;
  for (size_t node = 0; node < workersPerNode.size(); ++node) {
    int64_t workers = workersPerNode[node];
    if (groups.empty() || groups.back().workersPerNode != workers)
      groups.push_back({static_cast<int64_t>(node), 0, workers, rank});
    ++groups.back().nodes;
    rank += workers;
  }
  return groups;
}

}  // namespace strata::deploy
