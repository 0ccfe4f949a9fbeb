// Cutting a list of layers into stages: by explicit layer counts, by an
// explicit device per layer, or evenly by count. Every layer lands in exactly
// one stage, in order; none is dropped or duplicated.
//
// Throws ConfigError naming the values for fewer layers than stages, a count
// below 1, counts that do not sum to the number of layers, or a device list of
// the wrong length. Nothing blocks.
#pragma once

#include <torch/nn/modules/container/sequential.h>

#include <vector>

#include "strata/pipeline/stage.h"

namespace strata::pipeline {

// The children of a Sequential, in order, sharing the same modules.
LayerList layersOf(const torch::nn::Sequential& model);

// As even as possible; the first (layers % stages) stages get one extra.
std::vector<int> evenCounts(int layers, int stages);
// Throws ConfigError unless every count is >= 1 and they sum to `layers`.
void checkCounts(const std::vector<int>& counts, int layers);

// Consecutive layers on the same device form one stage:
// [cpu, cpu, cuda:1, cuda:1, cuda:1] -> counts {2, 3}, devices {cpu, cuda:1}.
struct DevicePlacement {
  std::vector<int> layersPerStage;
  std::vector<at::Device> stageDevices;
};
DevicePlacement placementFromLayerDevices(const std::vector<at::Device>& layerDevices);

// Builds, in order, every stage s with keep[s] true: layers
// [counts[0] + ... + counts[s-1], + counts[s]) moved to stageDevices[s].
std::vector<Stage> splitByCounts(const LayerList& layers, const std::vector<int>& counts,
                                 const std::vector<at::Device>& stageDevices,
                                 const std::vector<bool>& keep);

}  // namespace strata::pipeline
