// The yardstick for the trainer's overhead: the training loop a LibTorch user
// writes by hand for one process, with nothing of Strata's pipeline, data
// parallel or trainer machinery in it.
//
//   logits = model(ids)          the whole batch at once, no micro-batches
//   loss   = cross-entropy(logits, targets)
//   loss.backward()
//   clip_grad_norm_(parameters, clip)
//   AdamW step (decay on matrices only, as GPT recipes do), zero the grads
//
// The model is models::buildGpt (the same modules the trainer runs, on a
// communicator of one, so every collective in them is a no-op) and the data
// the same BatchReader over the same config, so the trainer and this loop do
// the same arithmetic on the same numbers. step() never blocks on peers;
// construction throws ConfigError for a config buildGpt or the reader reject.
#pragma once

#include <torch/nn/modules/container/sequential.h>
#include <torch/optim/adamw.h>

#include <memory>
#include <vector>

#include "strata/config/config.h"
#include "strata/data/batch_reader.h"
#include "strata/runtime/communicator.h"

namespace strata::bench {

class PlainGptLoop {
 public:
  PlainGptLoop(const train::TrainConfig& config, std::shared_ptr<Communicator> single);

  // One optimizer step over the next batch; returns its mean loss.
  double step();

 private:
  std::shared_ptr<Communicator> single_;
  torch::nn::Sequential model_;
  std::vector<at::Tensor> parameters_;              // each once (a tied weight is registered twice)
  std::unique_ptr<torch::optim::AdamW> optimizer_;  // optim::FusedAdamW
  std::unique_ptr<train::BatchReader> data_;
  double gradClip_;
};

}  // namespace strata::bench
