// ops::gelu against LibTorch's at::gelu and against GELU in float64, exact
// and tanh-approximated: the values and the gradient over a wide range (both tails, zero, a length
// that leaves a partial vector), the values where the formulas saturate, and the operands it leaves
// to LibTorch.
#include "strata/ops/gelu.h"

#include <ATen/autocast_mode.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <cstdlib>
#include <limits>

#include "relative_error.h"
#include "runtime/torch_compat.h"
#include "strata/error.h"

namespace strata::ops {
namespace {

// 4099 values from -12 to 12 (4099 = 256 vectors of 16 and 3 more), and
// some of a normal activation's size.
at::Tensor inputs() {
  torch::manual_seed(11);
  return torch::cat({torch::linspace(-12, 12, 4099), torch::randn({1000})});
}

// GTEST_SKIP returns from the function it is in: the tests skip themselves.
bool geluKernelRuns() { return geluUsesOwnKernel(inputs()); }

// The largest error of float32 `values` against GELU in float64 at x.
double largestError(const at::Tensor& values, const at::Tensor& truth) {
  return (values.to(at::kDouble) - truth).abs().max().item<double>();
}

TEST(Gelu, ValuesAndGradientAreAsCloseToTheTruthAsLibTorchs) {
  if (!geluKernelRuns()) GTEST_SKIP() << "this CPU runs no AVX-512";
  for (bool tanh : {false, true}) {
    const char* approximate = tanh ? "tanh" : "none";
    at::Tensor mine = inputs().requires_grad_(), theirs = inputs().requires_grad_();
    at::Tensor seed = torch::randn(mine.sizes());
    at::Tensor y = gelu(mine, tanh);
    at::Tensor expected = at::gelu(theirs, approximate);
    at::Tensor x64 = inputs().to(at::kDouble);
    at::Tensor truth = at::gelu(x64, approximate);
    EXPECT_LT(relativeError(y, expected), 1e-6) << approximate;
    // Elementwise, small values included: within 25% of LibTorch's own
    // float32 error (a few units in the last place of the result).
    EXPECT_LE(largestError(y, truth), 1.25 * largestError(expected, truth) + 1e-8) << approximate;
    y.backward(seed);
    expected.backward(seed);
    at::Tensor gradTruth = at::gelu_backward(seed.to(at::kDouble), x64, approximate);
    EXPECT_LT(relativeError(mine.grad(), theirs.grad()), 1e-6) << approximate;
    EXPECT_LE(largestError(mine.grad(), gradTruth),
              1.25 * largestError(theirs.grad(), gradTruth) + 1e-8)
        << approximate;
  }
}

TEST(Gelu, SaturatesAsTheFormulaDoes) {
  if (!geluKernelRuns()) GTEST_SKIP() << "this CPU runs no AVX-512";
  float inf = std::numeric_limits<float>::infinity();
  at::Tensor x = torch::tensor({1e30f, 100.0f, -100.0f, inf});
  for (bool tanh : {false, true}) {
    at::Tensor y = gelu(x, tanh);
    EXPECT_EQ(y[0].item<float>(), 1e30f);
    EXPECT_EQ(y[1].item<float>(), 100.0f);
    EXPECT_EQ(y[2].item<float>(), 0.0f);
    EXPECT_EQ(y[3].item<float>(), inf);
    EXPECT_TRUE(std::isnan(gelu(torch::tensor({NAN}), tanh).item<float>()));
  }
}

TEST(Gelu, LeavesOtherOperandsToLibTorch) {
  if (!geluKernelRuns()) GTEST_SKIP() << "this CPU runs no AVX-512";
  at::Tensor x = inputs();
  EXPECT_FALSE(geluUsesOwnKernel(x.to(at::kDouble)));
  EXPECT_TRUE(torch::equal(gelu(x.to(at::kDouble), false), at::gelu(x.to(at::kDouble))));
  at::Tensor strided = x.view({-1, 1}).expand({-1, 2});
  EXPECT_FALSE(geluUsesOwnKernel(strided));
  EXPECT_TRUE(torch::equal(gelu(strided, false), at::gelu(strided)));
  strata::compat::setAutocast(at::kCPU, true, at::kBFloat16);
  EXPECT_FALSE(geluUsesOwnKernel(x));
  strata::compat::setAutocast(at::kCPU, false, at::kBFloat16);
}

TEST(Gelu, TheEnvironmentSwitchesItAndABadValueIsNamed) {
  if (!geluKernelRuns()) GTEST_SKIP() << "this CPU runs no AVX-512";
  at::Tensor x = inputs();
  setenv("STRATA_OWN_GELU", "0", 1);
  EXPECT_FALSE(geluUsesOwnKernel(x));
  setenv("STRATA_OWN_GELU", "on", 1);
  try {
    gelu(x, false);
    ADD_FAILURE() << "a bad STRATA_OWN_GELU was taken";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("STRATA_OWN_GELU is 'on'"), std::string::npos) << e.what();
  }
  unsetenv("STRATA_OWN_GELU");
  EXPECT_TRUE(geluUsesOwnKernel(x));
}

}  // namespace
}  // namespace strata::ops
