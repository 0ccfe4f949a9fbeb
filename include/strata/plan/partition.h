// Cutting a chain of layers into contiguous pipeline stages.
//
// Each layer has a cost (forward + backward seconds) and a memory footprint
// (parameter + activation bytes). A partition assigns every layer to exactly one
// stage, stages keep layer order, and every stage holds at least one layer.
// partitionBalanced minimises the slowest stage's time subject to a per-stage
// memory limit (exact dynamic programming); partitionByCounts follows counts a
// user gave. Both throw PlanError, naming the values, for fewer layers than
// stages, counts that do not sum to the layer count, a non-positive count, a
// negative cost, or (balanced) a limit no contiguous cut can meet.
#pragma once

#include <limits>
#include <vector>

namespace strata::plan {

struct LayerCost {
  double seconds = 0;  // forward + backward time of one micro-batch
  double bytes = 0;    // parameters + stashed activations
};

struct StageReport {
  int firstLayer = 0;
  int numLayers = 0;
  double seconds = 0;  // sum of the stage's layer times
  double bytes = 0;    // sum of the stage's layer memory
};

struct Partition {
  std::vector<StageReport> stages;
  double slowestSeconds() const;
  double largestBytes() const;
  std::vector<int> counts() const;
};

constexpr double kNoMemoryLimit = std::numeric_limits<double>::infinity();

Partition partitionBalanced(const std::vector<LayerCost>& layers, int stages,
                            double memoryLimitBytes = kNoMemoryLimit);
Partition partitionByCounts(const std::vector<LayerCost>& layers, const std::vector<int>& counts);

}  // namespace strata::plan
