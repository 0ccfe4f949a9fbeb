// Building only the layers a pipeline rank holds (ModelFamily::build's
// `held`), and the kept ones as shells for ZeRO-3 (`heldAs`). A block outside
// `held` is still built, for its names and shapes only (no values drawn), and
// emptied at once: its index, names and the others' initial values (every
// layer has a seed stream of its own) stay as in the whole model, while the
// build holds one such block at a time. The embedding and the head
// are always built, whole where `held` leaves them out: a tied head shares
// the embedding's weight, and the trainer releases what a rank does not run
// once the pipeline is cut (pipeline/held_layers.h). Nothing blocks.
#pragma once

#include <torch/nn/module.h>

#include <cstdint>
#include <vector>

#include "strata/models/model_family.h"

namespace strata::models {

// Throws ConfigError unless `held` is empty or names every one of the
// layers + 2 top-level modules.
void checkHeldLayers(const std::vector<bool>& held, int64_t layers);

// Throws ConfigError unless 0 <= layer < layers + 2: a top-level module of
// a model of `layers` blocks.
void checkLayerIndex(int64_t layer, int64_t layers);

// Whether top-level module `layer` (of last + 1) must be built with its
// values: false for a block `held` leaves out (emptied at once) and for a
// kept layer that becomes a shell, so that neither spends time drawing
// values nobody reads. The embedding and the head outside `held` are drawn:
// a tied head shares the embedding's table.
bool drawsValues(const std::vector<bool>& held, int64_t layer, int64_t last, HeldAs heldAs);

// Block `block` (top-level module block + 1) as `held` and `heldAs` leave
// it: emptied (parameters and buffers) when `held` leaves it out, else as
// leaveHeld leaves a kept layer.
void leaveBlock(torch::nn::Module& module, const std::vector<bool>& held, int64_t block,
                HeldAs heldAs);

// The embedding (`layer` 0) or the head (layers + 1): a shell when `held`
// keeps it and heldAs is HeldAs::kShells, else whole.
void leaveEnd(torch::nn::Module& module, const std::vector<bool>& held, int64_t layer,
              HeldAs heldAs);

// A layer the rank keeps: under HeldAs::kShells a shell (each parameter a
// zero seen through zero strides, its shape kept; buffers whole), else
// untouched.
void leaveHeld(torch::nn::Module& module, HeldAs heldAs);

}  // namespace strata::models
