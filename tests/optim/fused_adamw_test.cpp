// FusedAdamW against LibTorch's torch::optim::AdamW: the same parameters and
// state after several steps, with the decay policy the trainer uses (matrices
// decay, vectors do not), a parameter large enough to be split over tasks,
// and one without a gradient; and a step on scaled gradients against
// scaling them first, the gradients left as they were.
#include "strata/optim/fused_adamw.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <vector>

#include "strata/optim/optimizer_state_key.h"

namespace strata::optim {
namespace {

constexpr int kSteps = 5;

std::vector<at::Tensor> makeParameters() {
  torch::manual_seed(11);
  return {torch::randn({300, 257}).requires_grad_(),  // 77,100 elements: several tasks
          torch::randn({13}).requires_grad_(), torch::randn({4, 6}).requires_grad_(),
          torch::randn({5}).requires_grad_()};  // never gets a gradient
}

std::vector<at::Tensor> copies(const std::vector<at::Tensor>& parameters) {
  std::vector<at::Tensor> out;
  for (const at::Tensor& p : parameters) out.push_back(p.detach().clone().requires_grad_());
  return out;
}

template <typename Optimizer>
std::unique_ptr<torch::optim::AdamW> twoGroups(std::vector<at::Tensor> parameters) {
  auto options = [](double decay) {
    return std::make_unique<torch::optim::AdamWOptions>(
        torch::optim::AdamWOptions(0.02).betas({0.9, 0.95}).eps(1e-8).weight_decay(decay));
  };
  std::vector<torch::optim::OptimizerParamGroup> groups;
  groups.emplace_back(std::vector<at::Tensor>{parameters[0], parameters[2]}, options(0.1));
  groups.emplace_back(std::vector<at::Tensor>{parameters[1], parameters[3]}, options(0.0));
  return std::make_unique<Optimizer>(std::move(groups), torch::optim::AdamWOptions(0.02));
}

double relativeDifference(const at::Tensor& a, const at::Tensor& b) {
  return ((a - b).abs().max() / b.abs().max().clamp_min(1e-30)).item<double>();
}

TEST(FusedAdamW, EqualsTorchAdamWOverSeveralSteps) {
  std::vector<at::Tensor> reference = makeParameters();
  std::vector<at::Tensor> fused = copies(reference);
  auto referenceOptimizer = twoGroups<torch::optim::AdamW>(reference);
  auto fusedOptimizer = twoGroups<FusedAdamW>(fused);
  for (int step = 0; step < kSteps; ++step) {
    for (size_t i = 0; i + 1 < reference.size(); ++i) {
      at::Tensor grad = torch::randn_like(reference[i]) * (step + 1);
      reference[i].mutable_grad() = grad.clone();
      fused[i].mutable_grad() = grad.clone();
    }
    referenceOptimizer->step();
    fusedOptimizer->step();
  }
  for (size_t i = 0; i < reference.size(); ++i) {
    SCOPED_TRACE("parameter " + std::to_string(i));
    EXPECT_LT(relativeDifference(fused[i], reference[i]), 1e-6);
  }
  EXPECT_TRUE(torch::equal(fused[3], reference[3]));  // no gradient: untouched
  // The state is LibTorch's own, keyed as LibTorch keys it.
  ASSERT_EQ(fusedOptimizer->state().size(), 3u);
  for (size_t i = 0; i + 1 < reference.size(); ++i) {
    const auto& mine = static_cast<const torch::optim::AdamWParamState&>(
        *fusedOptimizer->state().at(optimizerStateKey(fusedOptimizer->state(), fused[i])));
    const auto& theirs =
        static_cast<const torch::optim::AdamWParamState&>(*referenceOptimizer->state().at(
            optimizerStateKey(referenceOptimizer->state(), reference[i])));
    EXPECT_EQ(mine.step(), kSteps);
    EXPECT_LT(relativeDifference(mine.exp_avg(), theirs.exp_avg()), 1e-6);
    EXPECT_LT(relativeDifference(mine.exp_avg_sq(), theirs.exp_avg_sq()), 1e-6);
  }
}

// Clipping's factor taken in the update gives the parameters a step on
// gradients scaled first gives, element for element (the product rounded to
// float as grad.mul_ rounds it), and the gradients keep their values.
TEST(FusedAdamW, StepOnScaledGradientsEqualsScalingThemFirst) {
  constexpr double kScale = 0.37;
  std::vector<at::Tensor> scaledFirst = makeParameters();
  std::vector<at::Tensor> inUpdate = copies(scaledFirst);
  auto scaledFirstOptimizer = twoGroups<FusedAdamW>(scaledFirst);
  auto inUpdateOptimizer = twoGroups<FusedAdamW>(inUpdate);
  std::vector<at::Tensor> grads;
  for (size_t i = 0; i + 1 < scaledFirst.size(); ++i) {
    grads.push_back(torch::randn_like(scaledFirst[i]));
    scaledFirst[i].mutable_grad() = grads.back() * kScale;
    inUpdate[i].mutable_grad() = grads.back().clone();
  }
  scaledFirstOptimizer->step();
  static_cast<FusedAdamW&>(*inUpdateOptimizer).stepOnScaledGradients(kScale);
  for (size_t i = 0; i < scaledFirst.size(); ++i) {
    SCOPED_TRACE("parameter " + std::to_string(i));
    EXPECT_TRUE(torch::equal(inUpdate[i], scaledFirst[i]));
    if (i < grads.size()) {
      EXPECT_TRUE(torch::equal(inUpdate[i].grad(), grads[i]));
    }
  }
}

}  // namespace
}  // namespace strata::optim
