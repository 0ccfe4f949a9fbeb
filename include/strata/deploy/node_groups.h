// Nodes grouped into runs of consecutive nodes with the same worker count:
// one Indexed Job runs each run ("replica group"), and the node rank of its
// pod k is the group's first node plus k. Ranks are assigned in node order,
// so a group's first global rank is the sum of the workers before it.
//
// Plain data; nothing here throws or blocks.
#pragma once

#include <cstdint>
#include <vector>

namespace strata::deploy {

struct NodeGroup {
  int64_t firstNode = 0;
  int64_t nodes = 0;
  int64_t workersPerNode = 0;
  int64_t firstRank = 0;
};

// {3, 3, 2} -> {first node 0, 2 nodes of 3, first rank 0}, {2, 1 node of 2, 6}.
std::vector<NodeGroup> nodeGroups(const std::vector<int64_t>& workersPerNode);

}  // namespace strata::deploy
