#include "strata/runtime/layout.h"

#include <algorithm>
#include <sstream>

#include "strata/error.h"

namespace strata {

const char* dimName(Dim dim) {
  switch (dim) {
    case Dim::kPipeline:
      return "pp";
    case Dim::kData:
      return "dp";
    case Dim::kContext:
      return "cp";
    case Dim::kTensor:
      return "tp";
  }
  return "?";
}

namespace {

// The field of each dimension, indexed by Dim, so one table serves degrees
// and coordinates alike.
constexpr int ParallelDegrees::*kDegreeField[] = {&ParallelDegrees::pp, &ParallelDegrees::dp,
                                                  &ParallelDegrees::cp, &ParallelDegrees::tp};
constexpr int Coord::*kCoordField[] = {&Coord::pp, &Coord::dp, &Coord::cp, &Coord::tp};

}  // namespace

int ParallelDegrees::of(Dim dim) const { return this->*kDegreeField[static_cast<int>(dim)]; }

int Coord::of(Dim dim) const { return this->*kCoordField[static_cast<int>(dim)]; }

bool Coord::operator==(const Coord& other) const {
  return pp == other.pp && dp == other.dp && cp == other.cp && tp == other.tp;
}

namespace {

std::string factors(const ParallelDegrees& d) {
  std::ostringstream out;
  out << "pp " << d.pp << " x dp " << d.dp;
  if (d.cp != 1) out << " x cp " << d.cp;
  out << " x tp " << d.tp;
  return out.str();
}

void setCoord(Coord& coord, Dim dim, int value) {
  coord.*kCoordField[static_cast<int>(dim)] = value;
}

}  // namespace

ParallelLayout::ParallelLayout(int worldSize, ParallelDegrees degrees)
    : worldSize_(worldSize), degrees_(degrees) {
  std::string bad;
  for (Dim dim : kAllDims) {
    if (degrees.of(dim) < 1) {
      bad += std::string(bad.empty() ? "" : ", ") + dimName(dim) + " " +
             std::to_string(degrees.of(dim));
    }
  }
  if (!bad.empty()) {
    throw ConfigError("every parallel degree must be at least 1, got " + bad + " (layout " +
                      factors(degrees) + ")");
  }
  if (worldSize < 1) {
    throw ConfigError("world size must be at least 1, got " + std::to_string(worldSize));
  }
  if (degrees.product() != worldSize) {
    throw ConfigError("world size " + std::to_string(worldSize) + " != " + factors(degrees) +
                      " = " + std::to_string(degrees.product()));
  }
}

int ParallelLayout::rankOf(const Coord& c) const {
  const ParallelDegrees& d = degrees_;
  return c.tp + d.tp * (c.cp + d.cp * (c.dp + d.dp * c.pp));
}

Coord ParallelLayout::coordOf(int rank) const {
  if (rank < 0 || rank >= worldSize_) {
    throw ConfigError("rank " + std::to_string(rank) + " is outside [0, " +
                      std::to_string(worldSize_) + ")");
  }
  const ParallelDegrees& d = degrees_;
  Coord c;
  c.tp = rank % d.tp;
  rank /= d.tp;
  c.cp = rank % d.cp;
  rank /= d.cp;
  c.dp = rank % d.dp;
  c.pp = rank / d.dp;
  return c;
}

std::vector<int> ParallelLayout::groupRanks(Dim dim, int rank) const {
  Coord coord = coordOf(rank);
  std::vector<int> ranks;
  for (int i = 0; i < degree(dim); ++i) {
    setCoord(coord, dim, i);
    ranks.push_back(rankOf(coord));
  }
  return ranks;
}

std::vector<std::vector<int>> ParallelLayout::allGroups(Dim dim) const {
  std::vector<std::vector<int>> groups;
  for (int rank = 0; rank < worldSize_; ++rank) {
    if (coordOf(rank).of(dim) == 0) groups.push_back(groupRanks(dim, rank));
  }
  return groups;
}

std::string ParallelLayout::describe() const { return factors(degrees_); }

namespace {

// Node of each rank, from the workers per node in rank order.
std::vector<int> nodeOfRanks(const std::vector<int>& nodeSizes) {
  std::vector<int> nodeOf;
  for (size_t node = 0; node < nodeSizes.size(); ++node)
    nodeOf.insert(nodeOf.end(), nodeSizes[node], static_cast<int>(node));
  return nodeOf;
}

std::string ranksOfNode(const std::vector<int>& nodeSizes, int node) {
  int first = 0;
  for (int i = 0; i < node; ++i) first += nodeSizes[i];
  return std::to_string(first) + "-" + std::to_string(first + nodeSizes[node] - 1);
}

}  // namespace

void checkTensorParallelInsideNodes(const ParallelLayout& layout,
                                    const std::vector<int>& nodeSizes) {
  std::vector<int> nodeOf = nodeOfRanks(nodeSizes);
  if (nodeSizes.empty() || static_cast<int>(nodeOf.size()) != layout.worldSize()) return;
  for (const std::vector<int>& group : layout.allGroups(Dim::kTensor)) {
    int first = nodeOf[group.front()], last = nodeOf[group.back()];
    if (first == last) continue;
    std::string sizes;
    for (int size : nodeSizes) sizes += (sizes.empty() ? "" : ",") + std::to_string(size);
    int tp = layout.degree(Dim::kTensor);
    throw ConfigError("tp " + std::to_string(tp) +
                      " needs each tensor-parallel group inside one node, but ranks " +
                      std::to_string(group.front()) + "-" + std::to_string(group.back()) +
                      " span node " + std::to_string(first) + " (ranks " +
                      ranksOfNode(nodeSizes, first) + ") and node " + std::to_string(last) +
                      " (ranks " + ranksOfNode(nodeSizes, last) + "); the nodes run " + sizes +
                      " workers: give every node a multiple of " + std::to_string(tp) +
                      " workers or choose another tp");
  }
}

}  // namespace strata
