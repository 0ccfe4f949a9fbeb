// The flat-shard updates equal LibTorch's optimizers, operation for operation,
// even when the flat vector is cut into segments that straddle parameters.
#include "strata/data_parallel/flat_optimizer.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "strata/error.h"

namespace strata::data_parallel {
namespace {

constexpr int kSteps = 6;

std::vector<torch::Tensor> makeParams() {
  torch::manual_seed(3);
  return {torch::randn({4, 5}).requires_grad_(), torch::randn({7}).requires_grad_(),
          torch::randn({2, 3}).requires_grad_()};
}

// Runs `reference` on whole parameters and `flat` on the concatenation cut
// into segments of `cuts` elements, with the same gradients each step.
double maxDeviation(torch::optim::Optimizer& reference, std::vector<torch::Tensor>& params,
                    FlatOptimizer& flat, const std::vector<int64_t>& cuts) {
  torch::Tensor flatParams;
  {
    torch::NoGradGuard noGrad;
    std::vector<torch::Tensor> pieces;
    for (auto& p : params) pieces.push_back(p.detach().reshape(-1));
    flatParams = torch::cat(pieces);
  }
  flat.allocate(cuts, flatParams.options());
  for (int step = 0; step < kSteps; ++step) {
    std::vector<torch::Tensor> grads;
    for (auto& p : params) {
      p.mutable_grad() = torch::randn_like(p);
      grads.push_back(p.grad().reshape(-1));
    }
    torch::Tensor flatGrads = torch::cat(grads);
    reference.step();
    flat.beginStep();
    int64_t offset = 0;
    for (size_t s = 0; s < cuts.size(); ++s) {
      torch::Tensor segment = flatParams.narrow(0, offset, cuts[s]);
      flat.update(s, segment, flatGrads.narrow(0, offset, cuts[s]));
      offset += cuts[s];
    }
  }
  std::vector<torch::Tensor> pieces;
  for (auto& p : params) pieces.push_back(p.detach().reshape(-1));
  return (torch::cat(pieces) - flatParams).abs().max().item<double>();
}

const std::vector<int64_t> kCuts{9, 13, 11};  // 33 elements, cut across parameter edges

TEST(FlatAdamW, EqualsTorchAdamW) {
  auto params = makeParams();
  torch::optim::AdamW reference(params, torch::optim::AdamWOptions(0.05).weight_decay(0.1));
  AdamWConfig config;
  config.lr = 0.05;
  config.weightDecay = 0.1;
  FlatAdamW flat(config);
  EXPECT_LE(maxDeviation(reference, params, flat, kCuts), 1e-6);
  EXPECT_EQ(flat.stateBytes(), 2 * 33 * 4);
}

TEST(FlatSgd, EqualsTorchSgdWithMomentumAndNesterov) {
  struct Case {
    torch::optim::SGDOptions torchOptions;
    SgdConfig config;
  };
  std::vector<Case> cases{
      {torch::optim::SGDOptions(0.1), {0.1, 0, 0, 0, false}},
      {torch::optim::SGDOptions(0.1).momentum(0.9).dampening(0.2).weight_decay(0.01),
       {0.1, 0.9, 0.2, 0.01, false}},
      {torch::optim::SGDOptions(0.1).momentum(0.8).nesterov(true).weight_decay(0.02),
       {0.1, 0.8, 0, 0.02, true}}};
  for (const Case& c : cases) {
    auto params = makeParams();
    torch::optim::SGD reference(params, c.torchOptions);
    FlatSgd flat(c.config);
    EXPECT_LE(maxDeviation(reference, params, flat, kCuts), 1e-6)
        << "momentum " << c.config.momentum;
  }
}

// Two updates, then the state moves to a fresh optimizer (deep copies, as a
// checkpoint would): the next updates of both are equal, bit for bit.
void expectStateCarriesOver(FlatOptimizer& original, FlatOptimizer& restored) {
  torch::manual_seed(5);
  auto type = torch::TensorOptions(torch::kFloat);
  original.allocate(kCuts, type);
  restored.allocate(kCuts, type);
  std::vector<torch::Tensor> a, b;
  for (int64_t n : kCuts) a.push_back(torch::randn({n}));
  for (const auto& t : a) b.push_back(t.clone());
  auto update = [](FlatOptimizer& opt, std::vector<torch::Tensor>& params) {
    opt.beginStep();
    for (size_t s = 0; s < params.size(); ++s) {
      torch::manual_seed(10 + static_cast<int>(s));
      opt.update(s, params[s], torch::randn_like(params[s]));
    }
  };
  update(original, a);
  update(original, a);
  std::vector<NamedTensor> saved = original.saveState();
  for (auto& item : saved) item.tensor = item.tensor.clone();
  restored.loadState(saved);
  for (size_t s = 0; s < a.size(); ++s) b[s].copy_(a[s]);
  update(original, a);
  update(restored, b);
  for (size_t s = 0; s < a.size(); ++s) EXPECT_TRUE(torch::equal(a[s], b[s])) << "segment " << s;
}

TEST(FlatOptimizer, SavedStateLoadsIntoAFreshOptimizer) {
  FlatAdamW adam({}), freshAdam({});
  expectStateCarriesOver(adam, freshAdam);
  SgdConfig momentum{0.1, 0.9, 0, 0, true};
  FlatSgd sgd(momentum), freshSgd(momentum);
  expectStateCarriesOver(sgd, freshSgd);
}

TEST(FlatOptimizer, StateOfAnotherShapeIsNamed) {
  FlatAdamW saved({}), other({});
  saved.allocate({4, 5}, torch::kFloat);
  other.allocate({4, 6}, torch::kFloat);
  try {
    other.loadState(saved.saveState());
    ADD_FAILURE() << "state of another shape loaded";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("'exp_avg.1' has 5 elements in the saved state, 6 here"),
              std::string::npos)
        << e.what();
  }
}

TEST(FlatOptimizer, RejectsBadHyperParameters) {
  AdamWConfig adam;
  adam.beta2 = 1.0;
  EXPECT_THROW(FlatAdamW{adam}, ConfigError);
  SgdConfig sgd;
  sgd.lr = 0;
  EXPECT_THROW(FlatSgd{sgd}, ConfigError);
  sgd = SgdConfig{};
  sgd.nesterov = true;
  EXPECT_THROW(FlatSgd{sgd}, ConfigError);
}

}  // namespace
}  // namespace strata::data_parallel
