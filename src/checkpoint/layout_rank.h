// One rank of a layout, built in this process as the trainer builds it: its
// pipeline stages' layers at its tp shard (the other blocks emptied), AdamW
// over the parameters it trains, and the RankState a shard is saved from or
// loaded into. What `strata checkpoint convert` fills and writes rank by
// rank, and what the DCP conversion fills at the layout of one process.
// Builds only; nothing blocks.
#pragma once

#include <torch/nn/modules/container/sequential.h>
#include <torch/optim/adamw.h>

#include <memory>

#include "strata/checkpoint/checkpoint.h"
#include "strata/config/config.h"

namespace strata::train {

struct LayoutRank {
  torch::nn::Sequential model{nullptr};
  std::unique_ptr<torch::optim::AdamW> optimizer;
  RankState state;  // points at model and optimizer; lr, data and dpRank left to the caller
};

// Pipeline rank `pp` at tp rank `tp` of `config`'s layout (validated), its
// parameters at their initial values and AdamW without state.
LayoutRank buildLayoutRank(const TrainConfig& config, int pp, int tp);

}  // namespace strata::train
