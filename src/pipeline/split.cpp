#include "strata/pipeline/split.h"

#include <torch/torch.h>

#include <numeric>
#include <sstream>

#include "strata/error.h"

namespace strata::pipeline {
namespace {

std::string join(const std::vector<int>& values) {
  std::ostringstream out;
  for (std::size_t i = 0; i < values.size(); ++i) out << (i ? ", " : "") << values[i];
  return out.str();
}

}  // namespace

LayerList layersOf(const torch::nn::Sequential& model) {
  return LayerList(model->begin(), model->end());
}

std::vector<int> evenCounts(int layers, int stages) {
  if (stages < 1)
    throw ConfigError("pipeline needs at least 1 stage, got " + std::to_string(stages));
  if (layers < stages) {
    throw ConfigError("cannot cut " + std::to_string(layers) + " layers into " +
                      std::to_string(stages) + " pipeline stages: every stage needs a layer");
  }
  std::vector<int> counts(stages, layers / stages);
  for (int s = 0; s < layers % stages; ++s) ++counts[s];
  return counts;
}

void checkCounts(const std::vector<int>& counts, int layers) {
  if (static_cast<int>(counts.size()) > layers) {
    throw ConfigError("cannot cut " + std::to_string(layers) + " layers into " +
                      std::to_string(counts.size()) +
                      " pipeline stages: every stage needs a layer");
  }
  for (std::size_t s = 0; s < counts.size(); ++s) {
    if (counts[s] < 1) {
      throw ConfigError("pipeline stage " + std::to_string(s) + " has " +
                        std::to_string(counts[s]) + " layers (counts " + join(counts) +
                        "); every stage needs at least 1");
    }
  }
  int total = std::accumulate(counts.begin(), counts.end(), 0);
  if (total != layers) {
    throw ConfigError("layers per stage {" + join(counts) + "} sum to " + std::to_string(total) +
                      ", but the model has " + std::to_string(layers) + " layers");
  }
}

DevicePlacement placementFromLayerDevices(const std::vector<at::Device>& layerDevices) {
  if (layerDevices.empty()) throw ConfigError("placement needs a device for every layer, got none");
  DevicePlacement placement;
  for (const at::Device& device : layerDevices) {
    if (placement.stageDevices.empty() || placement.stageDevices.back() != device) {
      placement.stageDevices.push_back(device);
      placement.layersPerStage.push_back(0);
    }
    ++placement.layersPerStage.back();
  }
  return placement;
}

std::vector<Stage> splitByCounts(const LayerList& layers, const std::vector<int>& counts,
                                 const std::vector<at::Device>& stageDevices,
                                 const std::vector<bool>& keep) {
  checkCounts(counts, static_cast<int>(layers.size()));
  if (stageDevices.size() != counts.size() || keep.size() != counts.size()) {
    throw ConfigError("splitByCounts: " + std::to_string(counts.size()) + " stages but " +
                      std::to_string(stageDevices.size()) + " devices and " +
                      std::to_string(keep.size()) + " keep flags");
  }
  std::vector<Stage> stages;
  int first = 0;
  for (std::size_t s = 0; s < counts.size(); ++s) {
    if (keep[s]) {
      LayerList slice(layers.begin() + first, layers.begin() + first + counts[s]);
      stages.emplace_back(static_cast<int>(s), first, std::move(slice), stageDevices[s]);
    }
    first += counts[s];
  }
  return stages;
}

}  // namespace strata::pipeline
