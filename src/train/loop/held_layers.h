// A pipeline rank keeps only its stages' weights. The trainer builds every
// layer of the model on every rank (the same initial values everywhere, drawn
// in one order) and cuts it into stages; the layers other ranks train would
// otherwise stay in this rank's memory for the whole run. Nothing blocks.
#pragma once

#include <torch/torch.h>

#include <vector>

namespace strata::train {

// Releases the parameters and buffers of `model`'s top-level children
// (layers) that hold none of `kept` (the rank's pipeline parameters): each
// becomes an empty tensor of its dtype and device, its memory freed unless a
// kept layer shares the tensor (a tied weight). Returns which layers are
// held, by index, or an empty vector when all are (nothing released).
std::vector<bool> releaseOtherLayers(torch::nn::Sequential& model,
                                     const std::vector<at::Tensor>& kept);

}  // namespace strata::train
