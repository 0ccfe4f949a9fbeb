// Measuring layers on the real device, for automatic partitioning.
//
// profileLayers runs a sample micro-batch through the layers one by one on
// `device`: for each layer a few warm-up and then timed forward and backward
// passes (median kept), its parameter bytes and its output (activation)
// bytes. It blocks for the time the runs take, leaves every parameter's .grad
// undefined afterwards, and throws ConfigError for no layers, an undefined
// sample or fewer than 1 repetition. It does not communicate; the Pipeline
// averages the measurements over every rank of its layout, so that every
// rank cuts alike.
#pragma once

#include <ATen/core/Tensor.h>

#include <functional>
#include <string>
#include <vector>

#include "strata/pipeline/stage.h"
#include "strata/plan/partition.h"

namespace strata::pipeline {

struct LayerProfile {
  double forwardSeconds = 0;
  double backwardSeconds = 0;
  int64_t parameterBytes = 0;
  int64_t activationBytes = 0;  // the layer's output for one micro-batch
};

struct ProfileOptions {
  int warmup = 2;
  int repetitions = 5;
  // When set, the last layer's forward is timed together with this loss of
  // its output, and its backward starts from that loss: a model whose loss
  // does real work (an output projection fused into the cross-entropy) is
  // weighed whole, on the stage that will run it.
  std::function<at::Tensor(const at::Tensor& output)> lastLayerLoss;
};

std::vector<LayerProfile> profileLayers(const LayerList& layers, const at::Tensor& sampleMicrobatch,
                                        at::Device device, const ProfileOptions& options = {});

// What the partitioner weighs: seconds = forward + backward; bytes = 2 x
// parameters (weights and their gradients) + stashedMicrobatches x activations
// (a schedule keeps up to that many micro-batches alive on a stage).
std::vector<plan::LayerCost> toLayerCosts(const std::vector<LayerProfile>& profiles,
                                          int stashedMicrobatches);

// A printable table: per stage its layers, predicted time (ms) and memory
// (MiB), then the slowest stage.
std::string formatPartition(const plan::Partition& partition);

}  // namespace strata::pipeline
