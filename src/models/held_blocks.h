// Building only the blocks a pipeline rank holds (ModelFamily::build's
// `held`), and the held ones as shells for ZeRO-3 (`heldAs`). A block
// outside it is still built, from its own seed stream, and emptied at once: its index, names and
// the others' initial values stay as in the whole model, while the build holds one such block at a
// time. The embedding and the head are built whole: a tied head shares the embedding's weight, and
// the trainer releases them once the pipeline is cut (train/loop/held_layers.h). Nothing blocks.
#pragma once

#include <torch/nn/module.h>

#include <cstdint>
#include <vector>

#include "strata/models/model_family.h"

namespace strata::models {

// Throws ConfigError unless `held` is empty or names every one of the
// layers + 2 top-level modules.
void checkHeldLayers(const std::vector<bool>& held, int64_t layers);

// Throws ConfigError unless 0 <= block < layers.
void checkBlockIndex(int64_t block, int64_t layers);

// Block `block` (top-level module block + 1) as `held` and `heldAs` leave
// it: emptied (parameters and buffers) when `held` leaves it out, a shell
// (HeldBlocks::kShells: each parameter a zero seen through zero strides, its
// shape kept) when held as one, else untouched.
void leaveBlock(torch::nn::Module& module, const std::vector<bool>& held, int64_t block,
                HeldBlocks heldAs);

}  // namespace strata::models
