// A model whose layers differ in cost, for cost-balanced partitioning: eight
// layers x = tanh(W x), the first applied ten times, the others once. Shared
// by the pipeline tests and the pipeline benchmark; needs only LibTorch.
#pragma once

#include <torch/torch.h>

#include <cstdint>

namespace strata::testing {

// x = tanh(W x), `repeats` times with the same W.
struct RepeatedLinearImpl : torch::nn::Module {
  RepeatedLinearImpl(int64_t width, int repeats)
      : linear(register_module("linear", torch::nn::Linear(width, width))), repeats(repeats) {}
  torch::Tensor forward(torch::Tensor x) {
    for (int i = 0; i < repeats; ++i) x = torch::tanh(linear(x));
    return x;
  }
  torch::nn::Linear linear;
  int repeats;
};
TORCH_MODULE(RepeatedLinear);

// Layer 0 costs about ten times each of the other seven.
inline torch::nn::Sequential heavyFirstModel(uint64_t seed, int64_t width) {
  torch::manual_seed(seed);
  torch::nn::Sequential model;
  for (int i = 0; i < 8; ++i) model->push_back(RepeatedLinear(width, i == 0 ? 10 : 1));
  return model;
}

}  // namespace strata::testing
