// Where a rank trains: `train.device` "cpu", or "cuda", meaning GPU LOCAL_RANK
// of the rank's node (one GPU per rank, as torchrun lays them out).
//
// trainingDevice throws ConfigError naming the rank's local rank and the GPUs
// seen when "cuda" cannot be honoured (no CUDA in this LibTorch, no GPU, or
// fewer GPUs than ranks on the node). Nothing blocks; for a GPU it also makes
// that GPU the current device, where LibTorch allocates by default.
#pragma once

#include <c10/core/Device.h>

#include <string>

namespace strata::train {

c10::Device trainingDevice(const std::string& device, int localRank);

}  // namespace strata::train
