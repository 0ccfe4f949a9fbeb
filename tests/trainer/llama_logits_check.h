// Strata's one-process Llama or Mixtral against the independent Hugging Face
// forward (independent_llama.h) of an exported folder.
#pragma once

#include <torch/torch.h>

#include <map>
#include <string>

#include "independent_llama.h"

namespace strata::train::testing {

// Checks (GoogleTest) that `model` gives the logits of the Hugging Face
// forward of `folder` (config.json, and `weights` read from it) for ids
// [b, s], within 1e-5 of their norm; returns those logits [b, s, V].
torch::Tensor expectHuggingFaceLogits(torch::nn::Sequential& model, const std::string& folder,
                                      const std::map<std::string, RawTensor>& weights,
                                      const torch::Tensor& ids);

}  // namespace strata::train::testing
