// Trains the independent reference of the config's family (a GPT,
// tests/support/reference_gpt.h, or a Llama, reference_llama.h) the way the
// Trainer's documentation says a step goes, in plain LibTorch:
//
//   for each micro-batch j of the global batch (in order):
//     loss_j = cross-entropy, dropout call = step * M + j;  (loss_j / M).backward()
//   clip the global gradient norm to train.grad_clip;  AdamW (matrices decay,
//   vectors do not) at the warmup-cosine rate of the step.
//
// With a loss mask the loss is the sum over the counted targets divided by
// their count in the global batch. With packed documents (data.pack) each
// document of each window runs through the model alone, and the target
// where a document ends inside its window is not counted.
//
// The starting weights are a one-process Strata model's, built from the same
// seed (the only Strata model code it touches), and the batches come from
// Strata's data reader with one replica, so a parallel run must reproduce
// this run's losses and parameters.
#pragma once

#include <torch/torch.h>

#include <map>
#include <string>
#include <vector>

#include "strata/config/config.h"

namespace strata::train::testing {

struct ReferenceRun {
  std::vector<double> losses;                       // one per step
  std::vector<double> gradNorms;                    // one per step, before clipping
  double validationLoss = 0;                        // after the last step, one global batch
  std::map<std::string, torch::Tensor> parameters;  // Strata's names, unpadded
};

ReferenceRun trainReference(const TrainConfig& config, int steps);

}  // namespace strata::train::testing
