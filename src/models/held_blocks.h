// Building only the blocks a pipeline rank holds (ModelFamily::build's
// `held`). A block outside it is still built, from its own seed stream, and
// emptied at once: its index, names and the others' initial values stay as
// in the whole model, while the build holds one such block at a time. The
// embedding and the head are built whole: a tied head shares the
// embedding's weight, and the trainer releases them once the pipeline is cut
// (train/loop/held_layers.h). Nothing blocks.
#pragma once

#include <torch/nn/module.h>

#include <cstdint>
#include <vector>

namespace strata::models {

// Throws ConfigError unless `held` is empty or names every one of the
// layers + 2 top-level modules.
void checkHeldLayers(const std::vector<bool>& held, int64_t layers);

// Empties the parameters and buffers of block `block` (top-level module
// block + 1) when `held` leaves it out.
void emptyUnheldBlock(torch::nn::Module& module, const std::vector<bool>& held, int64_t block);

}  // namespace strata::models
