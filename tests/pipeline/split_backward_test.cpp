// The zero-bubble split of a stage's backward (split_backward.h): I and W
// together give exactly a plain backward's input and weight gradients, and W
// computes no activation gradient again.
#include "split_backward.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

namespace strata::pipeline {
namespace {

// Identity in forward; counts the times its backward runs.
struct CountedIdentity : torch::autograd::Function<CountedIdentity> {
  static at::Tensor forward(torch::autograd::AutogradContext*, const at::Tensor& x) {
    return x.clone();
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext*,
                                                 torch::autograd::variable_list grads) {
    ++calls;
    return grads;
  }
  static inline int calls = 0;
};

// A stage of two linears, a LayerNorm and a shared weight used twice:
// y = ln(W2 counted(tanh(W1 x + b1))) + x V V^T.
struct Stage {
  torch::nn::Linear first{torch::nn::Linear(8, 8)};
  torch::nn::Linear second{torch::nn::Linear(8, 8)};
  torch::nn::LayerNorm norm{torch::nn::LayerNormOptions({8})};
  at::Tensor shared = torch::randn({8, 8}, torch::requires_grad());

  at::Tensor forward(const at::Tensor& x) {
    at::Tensor h = CountedIdentity::apply(torch::tanh(first(x)));
    return norm(second(h)) + x.matmul(shared).matmul(shared.t());
  }
  std::vector<at::Tensor> parameters() {
    std::vector<at::Tensor> all{shared};
    for (auto* module :
         std::initializer_list<torch::nn::Module*>{first.get(), second.get(), norm.get()})
      for (const at::Tensor& p : module->parameters()) all.push_back(p);
    return all;
  }
};

TEST(SplitBackward, InputThenWeightGradientsEqualOneBackward) {
  torch::manual_seed(0);
  Stage stage;
  at::Tensor x = torch::randn({4, 8});
  at::Tensor dy = torch::randn({4, 8});

  at::Tensor whole = x.clone().requires_grad_(true);
  torch::autograd::backward({stage.forward(whole)}, {dy});
  std::vector<at::Tensor> expected;
  for (at::Tensor& p : stage.parameters()) {
    expected.push_back(p.grad().clone());
    p.mutable_grad() = at::Tensor();
  }

  at::Tensor input = x.clone().requires_grad_(true);
  at::Tensor output = stage.forward(input);
  CountedIdentity::calls = 0;
  SplitBackward split(output, input, stage.parameters());
  at::Tensor inputGrad = split.inputGradient(dy);
  EXPECT_TRUE(torch::allclose(inputGrad, whole.grad(), 1e-6, 1e-6));
  for (at::Tensor& p : stage.parameters()) EXPECT_FALSE(p.grad().defined());
  EXPECT_EQ(CountedIdentity::calls, 1);

  split.weightGradients();
  EXPECT_EQ(CountedIdentity::calls, 1) << "W walked the activation gradients again";
  EXPECT_FALSE(input.grad().defined());
  std::vector<at::Tensor> parameters = stage.parameters();
  for (size_t i = 0; i < parameters.size(); ++i) {
    ASSERT_TRUE(parameters[i].grad().defined()) << "parameter " << i;
    EXPECT_TRUE(torch::allclose(parameters[i].grad(), expected[i], 1e-6, 1e-6))
        << "parameter " << i;
  }
}

// A stage whose output does not depend on its input: all of it is W's.
TEST(SplitBackward, OutputWithoutTheInputLeavesEverythingToW) {
  torch::nn::Linear linear(4, 4);
  at::Tensor input = torch::randn({2, 4}, torch::requires_grad());
  at::Tensor output = linear(torch::ones({2, 4}));
  SplitBackward split(output, input, linear->parameters());
  EXPECT_FALSE(split.inputGradient(torch::ones({2, 4})).defined());
  split.weightGradients();
  EXPECT_TRUE(torch::allclose(linear->weight.grad(), torch::full({4, 4}, 2.0)));
}

}  // namespace
}  // namespace strata::pipeline
