// AdamW (optim::FusedAdamW: torch::optim::AdamW's arithmetic and state in
// one pass over memory) set up the way GPT training usually is:
// weight decay on matrices (embeddings and linear weights, dim >= 2) only,
// none on biases and layer-norm gains, which decay would pull towards zero
// for no regularising benefit.
//
// Nothing blocks or communicates; torch throws for invalid hyperparameters.
#pragma once

#include <memory>
#include <vector>

#include "strata/config/config.h"
#include "strata/optim/fused_adamw.h"

namespace strata::train {

// Two parameter groups, in this order: decayed (dim >= 2), then not decayed.
// The learning rate starts at config.lr; WarmupCosineLr sets it every step.
std::unique_ptr<optim::FusedAdamW> makeAdamW(const std::vector<at::Tensor>& parameters,
                                             const OptimConfig& config);

}  // namespace strata::train
