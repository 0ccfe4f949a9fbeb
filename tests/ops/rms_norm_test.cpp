// ops::rmsNorm against RMSNorm written out in plain LibTorch here: the values
// and the gradients of x and of the weight, at a width that leaves a partial
// vector and one of whole vectors, on one and two intra-op threads; and a
// bfloat16 input, which takes the written-out form.
#include "strata/ops/rms_norm.h"

#include <ATen/Parallel.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

namespace strata::ops {
namespace {

constexpr double kEps = 1e-5;

at::Tensor reference(const at::Tensor& x, const at::Tensor& weight) {
  at::Tensor x32 = x.to(at::kFloat);
  at::Tensor ms = (x32 * x32).sum(-1, true) / x32.size(-1);
  return (x32 / (ms + kEps).sqrt()).to(x.scalar_type()) * weight;
}

double relativeError(const at::Tensor& a, const at::Tensor& b) {
  return ((a - b).abs().max() / b.abs().max()).item<double>();
}

struct Result {
  at::Tensor y, gradX, gradWeight;
};

Result run(bool own, const at::Tensor& x0, const at::Tensor& w0, const at::Tensor& dy) {
  at::Tensor x = x0.clone().requires_grad_();
  at::Tensor w = w0.clone().requires_grad_();
  at::Tensor y = own ? rmsNorm(x, w, kEps) : reference(x, w);
  y.backward(dy);
  return {y.detach(), x.grad(), w.grad()};
}

void expectMatchesReference(int64_t hidden, int threads) {
  SCOPED_TRACE("hidden " + std::to_string(hidden) + ", " + std::to_string(threads) + " threads");
  torch::manual_seed(3);
  at::Tensor x = torch::randn({5, 7, hidden}) * 3;
  at::Tensor w = torch::randn({hidden});
  at::Tensor dy = torch::randn({5, 7, hidden});
  ASSERT_TRUE(rmsNormUsesOwnKernel(x, w));
  int before = at::get_num_threads();
  at::set_num_threads(threads);
  Result own = run(true, x, w, dy);
  at::set_num_threads(before);
  Result expected = run(false, x, w, dy);
  EXPECT_LT(relativeError(own.y, expected.y), 1e-6);
  EXPECT_LT(relativeError(own.gradX, expected.gradX), 1e-5);
  EXPECT_LT(relativeError(own.gradWeight, expected.gradWeight), 1e-5);
}

TEST(RmsNorm, MatchesLibTorchWrittenOut) {
  for (int64_t hidden : {37, 64})
    for (int threads : {1, 2}) expectMatchesReference(hidden, threads);
}

TEST(RmsNorm, Bfloat16TakesTheWrittenOutForm) {
  torch::manual_seed(4);
  at::Tensor x = torch::randn({6, 32}).to(at::kBFloat16);
  at::Tensor w = torch::randn({32});
  EXPECT_FALSE(rmsNormUsesOwnKernel(x, w));
  EXPECT_LT(relativeError(rmsNorm(x, w, kEps), reference(x, w)), 1e-2);  // bfloat16 rounding
}

}  // namespace
}  // namespace strata::ops
