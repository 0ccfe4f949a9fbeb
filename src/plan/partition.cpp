#include "strata/plan/partition.h"

#include <algorithm>
#include <sstream>
#include <string>

#include "strata/plan/errors.h"

namespace strata::plan {
namespace {

void checkLayers(const std::vector<LayerCost>& layers, int stages) {
  if (stages < 1)
    throw PlanError("a pipeline needs at least 1 stage, got " + std::to_string(stages));
  if (static_cast<int>(layers.size()) < stages)
    throw PlanError("cannot cut " + std::to_string(layers.size()) + " layers into " +
                    std::to_string(stages) + " stages: every stage needs at least one layer");
  for (size_t i = 0; i < layers.size(); ++i) {
    if (!(layers[i].seconds >= 0) || !(layers[i].bytes >= 0))
      throw PlanError("layer " + std::to_string(i) + " has a negative or NaN cost (" +
                      std::to_string(layers[i].seconds) + " s, " + std::to_string(layers[i].bytes) +
                      " bytes)");
  }
}

std::vector<double> prefix(const std::vector<LayerCost>& layers, double LayerCost::*field) {
  std::vector<double> sums(layers.size() + 1, 0.0);
  for (size_t i = 0; i < layers.size(); ++i) sums[i + 1] = sums[i] + layers[i].*field;
  return sums;
}

// Exact DP over contiguous cuts. best[k][j] is the smallest achievable
// max-over-stages of `minimise` when the first j layers form k stages:
//   best[k][j] = min_{i<j, bound(i..j) <= limit} max(best[k-1][i], minimise(i..j)).
// O(S * L^2), trivial for the hundreds of layers real models have. Ties keep
// the earliest cut, so the answer is deterministic. Returns the cut points, or
// an empty vector when no cut satisfies the bound.
std::vector<int> minMaxCuts(const std::vector<double>& minimise, const std::vector<double>& bound,
                            int stages, double limit) {
  const int n = static_cast<int>(minimise.size()) - 1;
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<std::vector<double>> best(stages + 1, std::vector<double>(n + 1, inf));
  std::vector<std::vector<int>> from(stages + 1, std::vector<int>(n + 1, -1));
  best[0][0] = 0;
  for (int k = 1; k <= stages; ++k) {
    for (int j = k; j <= n - (stages - k); ++j) {
      for (int i = k - 1; i < j; ++i) {
        if (best[k - 1][i] == inf || bound[j] - bound[i] > limit) continue;
        double value = std::max(best[k - 1][i], minimise[j] - minimise[i]);
        if (value < best[k][j]) {
          best[k][j] = value;
          from[k][j] = i;
        }
      }
    }
  }
  if (best[stages][n] == inf) return {};
  std::vector<int> cuts(stages + 1, n);
  for (int k = stages; k > 0; --k) cuts[k - 1] = from[k][cuts[k]];
  return cuts;
}

Partition fromCuts(const std::vector<LayerCost>& layers, const std::vector<int>& cuts) {
  Partition out;
  for (size_t s = 0; s + 1 < cuts.size(); ++s) {
    StageReport stage;
    stage.firstLayer = cuts[s];
    stage.numLayers = cuts[s + 1] - cuts[s];
    for (int i = cuts[s]; i < cuts[s + 1]; ++i) {
      stage.seconds += layers[i].seconds;
      stage.bytes += layers[i].bytes;
    }
    out.stages.push_back(stage);
  }
  return out;
}

}  // namespace

double Partition::slowestSeconds() const {
  double worst = 0;
  for (const StageReport& s : stages) worst = std::max(worst, s.seconds);
  return worst;
}

double Partition::largestBytes() const {
  double worst = 0;
  for (const StageReport& s : stages) worst = std::max(worst, s.bytes);
  return worst;
}

std::vector<int> Partition::counts() const {
  std::vector<int> out;
  for (const StageReport& s : stages) out.push_back(s.numLayers);
  return out;
}

Partition partitionBalanced(const std::vector<LayerCost>& layers, int stages,
                            double memoryLimitBytes) {
  checkLayers(layers, stages);
  std::vector<double> time = prefix(layers, &LayerCost::seconds);
  std::vector<double> bytes = prefix(layers, &LayerCost::bytes);
  std::vector<int> cuts = minMaxCuts(time, bytes, stages, memoryLimitBytes);
  if (cuts.empty()) {
    // The same DP, minimising memory with no bound, gives the smallest limit
    // any cut can meet, which is what the user needs to know.
    std::vector<int> leanest = minMaxCuts(bytes, time, stages, kNoMemoryLimit);
    std::ostringstream msg;
    msg << "no contiguous cut of " << layers.size() << " layers into " << stages
        << " stages keeps every stage within the memory limit of " << memoryLimitBytes
        << " bytes; the smallest limit any cut meets is "
        << fromCuts(layers, leanest).largestBytes() << " bytes";
    throw PlanError(msg.str());
  }
  return fromCuts(layers, cuts);
}

Partition partitionByCounts(const std::vector<LayerCost>& layers, const std::vector<int>& counts) {
  checkLayers(layers, static_cast<int>(counts.size()));
  std::vector<int> cuts{0};
  for (size_t s = 0; s < counts.size(); ++s) {
    if (counts[s] < 1)
      throw PlanError("stage " + std::to_string(s) + " is given " + std::to_string(counts[s]) +
                      " layers; every stage needs at least one");
    cuts.push_back(cuts.back() + counts[s]);
  }
  if (cuts.back() != static_cast<int>(layers.size()))
    throw PlanError("stage layer counts sum to " + std::to_string(cuts.back()) +
                    " but the model has " + std::to_string(layers.size()) + " layers");
  return fromCuts(layers, cuts);
}

}  // namespace strata::plan
