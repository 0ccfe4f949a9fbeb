// Internal: a LoRA run's frozen base ([finetune] method = "lora"). Only the
// adapters train: the base takes no gradients, and so no optimizer state,
// gradient reduction or place in the clipping norm. Nothing here blocks.
#pragma once

#include <torch/nn/module.h>

#include "strata/config/config.h"

namespace strata::train {

// Freezes every parameter of `model` but the adapters' (lora.h), and with
// finetune.base_dtype = "bf16" keeps the frozen projections in bf16, which
// bf16 autocast computes them in anyway (the same rounding, once instead of
// every step). Values loaded later (--init-from, a checkpoint) are copied
// in, and so converted. A no-op unless `finetune` is LoRA.
void freezeBase(torch::nn::Module& model, const FinetuneConfig& finetune);

}  // namespace strata::train
