// A pipeline rank keeps only its stages' weights. The model builder already
// empties the blocks of other ranks' stages as it makes them
// (ModelFamily::build's `held`; a measured cut is made first, on stand-ins);
// the embedding and the head are always built whole (a tied head shares the
// embedding's weight). What the pipeline left out is released here, once it
// is cut. Nothing blocks.
#pragma once

#include <torch/torch.h>

#include <vector>

namespace strata::pipeline {

// Releases the parameters and buffers of `model`'s top-level children
// (layers) that hold none of `kept` (the rank's pipeline parameters): each
// becomes an empty tensor of its dtype and device, its memory freed unless a
// kept layer shares the tensor (a tied weight). Returns which layers are
// held, by index, or an empty vector when all are (nothing released).
std::vector<bool> releaseOtherLayers(torch::nn::Sequential& model,
                                     const std::vector<at::Tensor>& kept);

}  // namespace strata::pipeline
