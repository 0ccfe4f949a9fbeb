#include "strata/deploy/layout_map.h"

#include <limits>
#include <nlohmann/json.hpp>
#include <numeric>

#include "strata/error.h"
#include "strata/runtime/layout.h"

namespace strata::deploy {
namespace {

using nlohmann::ordered_json;

ParallelLayout layoutOver(const train::ParallelConfig& parallel, int64_t worldSize) {
  auto asInt = [](int64_t value) {
    return static_cast<int>(std::min<int64_t>(value, std::numeric_limits<int>::max()));
  };
  if (worldSize != parallel.pp * parallel.dp * parallel.cp * parallel.tp)
    throw ConfigError("world size " + std::to_string(worldSize) +
                      " != " + train::layoutText(parallel));
  return ParallelLayout(asInt(worldSize), {asInt(parallel.pp), asInt(parallel.dp),
                                           asInt(parallel.cp), asInt(parallel.tp)});
}

ordered_json nodeEntries(const std::vector<int64_t>& workersPerNode) {
  ordered_json nodes = ordered_json::array();
  int64_t firstRank = 0;
  for (size_t node = 0; node < workersPerNode.size(); ++node) {
    nodes.push_back({{"node", node}, {"first_rank", firstRank}, {"workers", workersPerNode[node]}});
    firstRank += workersPerNode[node];
  }
  return nodes;
}

ordered_json rankEntries(const ParallelLayout& layout, const std::vector<int64_t>& workersPerNode) {
  ordered_json ranks = ordered_json::array();
  int rank = 0;
  for (size_t node = 0; node < workersPerNode.size(); ++node) {
    for (int64_t local = 0; local < workersPerNode[node]; ++local, ++rank) {
      Coord coord = layout.coordOf(rank);
      ranks.push_back({node, coord.pp, coord.dp, coord.cp, coord.tp});
    }
  }
  return ranks;
}

}  // namespace

ordered_json layoutMap(const train::ParallelConfig& parallel,
                       const std::vector<int64_t>& workersPerNode) {
  int64_t worldSize = std::accumulate(workersPerNode.begin(), workersPerNode.end(), int64_t{0});
  ParallelLayout layout = layoutOver(parallel, worldSize);
  return {{"world_size", worldSize},
          {"pp", parallel.pp},
          {"dp", parallel.dp},
          {"cp", parallel.cp},
          {"tp", parallel.tp},
          {"nodes", nodeEntries(workersPerNode)},
          {"columns", {"node", "pp", "dp", "cp", "tp"}},
          {"ranks", rankEntries(layout, workersPerNode)}};
}

}  // namespace strata::deploy
