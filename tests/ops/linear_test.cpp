// ops::linear against LibTorch's at::linear: the product, every gradient,
// each gradient asked for alone (the split backward's two passes), and the
// operands it leaves to LibTorch.
#include "strata/ops/linear.h"

#include <ATen/autocast_mode.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cstdlib>
#include <vector>

#include "relative_error.h"
#include "runtime/torch_compat.h"
#include "strata/error.h"

namespace strata::ops {
namespace {

struct Operands {
  at::Tensor x, weight, bias;
};

// x [3, 5, 24] (tokens in two leading dimensions), weight [40, 24], bias [40].
Operands leaves(at::ScalarType type = at::kFloat) {
  torch::manual_seed(3);
  auto options = torch::TensorOptions(type).requires_grad(true);
  return {torch::randn({3, 5, 24}, options), torch::randn({40, 24}, options),
          torch::randn({40}, options)};
}

Operands detachedCopy(const Operands& o) {
  return {o.x.detach().clone().requires_grad_(), o.weight.detach().clone().requires_grad_(),
          o.bias.detach().clone().requires_grad_()};
}

// GTEST_SKIP returns from the function it is in: the tests skip themselves.
bool linearRunsOnBlas() {
  Operands o = leaves();
  return linearUsesBlas(o.x, o.weight, o.bias);
}

TEST(Linear, ProductAndGradientsEqualLibTorchs) {
  if (!linearRunsOnBlas()) GTEST_SKIP() << "this LibTorch exports no BLAS sgemm_";
  for (bool withBias : {true, false}) {
    Operands mine = leaves(), theirs = detachedCopy(mine);
    at::Tensor seed = torch::randn({3, 5, 40});
    at::Tensor y = linear(mine.x, mine.weight, withBias ? mine.bias : at::Tensor());
    at::Tensor expected =
        at::linear(theirs.x, theirs.weight, withBias ? theirs.bias : at::Tensor());
    ASSERT_EQ(y.sizes(), expected.sizes());
    EXPECT_LT(relativeError(y, expected), 1e-6) << "bias " << withBias;
    y.backward(seed);
    expected.backward(seed);
    EXPECT_LT(relativeError(mine.x.grad(), theirs.x.grad()), 1e-6);
    EXPECT_LT(relativeError(mine.weight.grad(), theirs.weight.grad()), 1e-6);
    if (withBias) {
      EXPECT_LT(relativeError(mine.bias.grad(), theirs.bias.grad()), 1e-6);
    } else {
      EXPECT_FALSE(mine.bias.grad().defined());
    }
  }
}

TEST(Linear, ComputesOnlyTheGradientsAskedFor) {
  if (!linearRunsOnBlas()) GTEST_SKIP() << "this LibTorch exports no BLAS sgemm_";
  Operands mine = leaves(), theirs = detachedCopy(mine);
  at::Tensor seed = torch::randn({3, 5, 40});
  at::Tensor y = linear(mine.x, mine.weight, mine.bias);
  at::Tensor expected = at::linear(theirs.x, theirs.weight, theirs.bias);
  // An input-gradient pass, then a weight-gradient pass over the kept graph.
  at::Tensor gradX = torch::autograd::grad({y}, {mine.x}, {seed}, /*retain_graph=*/true)[0];
  EXPECT_FALSE(mine.weight.grad().defined());
  torch::autograd::backward({y}, {seed}, false, false, {mine.weight, mine.bias});
  EXPECT_FALSE(mine.x.grad().defined());
  expected.backward(seed);
  EXPECT_LT(relativeError(gradX, theirs.x.grad()), 1e-6);
  EXPECT_LT(relativeError(mine.weight.grad(), theirs.weight.grad()), 1e-6);
  EXPECT_LT(relativeError(mine.bias.grad(), theirs.bias.grad()), 1e-6);
}

TEST(Linear, LeavesOtherOperandsToLibTorch) {
  if (!linearRunsOnBlas()) GTEST_SKIP() << "this LibTorch exports no BLAS sgemm_";
  Operands doubles = leaves(at::kDouble);
  EXPECT_FALSE(linearUsesBlas(doubles.x, doubles.weight, doubles.bias));
  EXPECT_TRUE(torch::equal(linear(doubles.x, doubles.weight, doubles.bias),
                           at::linear(doubles.x, doubles.weight, doubles.bias)));
  Operands o = leaves();
  at::Tensor strided = o.x.transpose(0, 1);  // [5, 3, 24], not contiguous
  EXPECT_FALSE(linearUsesBlas(strided, o.weight, o.bias));
  EXPECT_LT(relativeError(linear(strided, o.weight, o.bias), at::linear(strided, o.weight, o.bias)),
            1e-6);
  strata::compat::setAutocast(at::kCPU, true, at::kBFloat16);
  EXPECT_FALSE(linearUsesBlas(o.x, o.weight, o.bias));
  strata::compat::setAutocast(at::kCPU, false, at::kBFloat16);
  EXPECT_TRUE(linearUsesBlas(o.x, o.weight, o.bias));
}

TEST(Linear, TheEnvironmentSwitchesItAndABadValueIsNamed) {
  if (!linearRunsOnBlas()) GTEST_SKIP() << "this LibTorch exports no BLAS sgemm_";
  Operands o = leaves();
  setenv("STRATA_BLAS_GEMM", "0", 1);
  EXPECT_FALSE(linearUsesBlas(o.x, o.weight, o.bias));
  setenv("STRATA_BLAS_GEMM", "yes", 1);
  try {
    linear(o.x, o.weight, o.bias);
    ADD_FAILURE() << "a bad STRATA_BLAS_GEMM was taken";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("STRATA_BLAS_GEMM is 'yes'"), std::string::npos)
        << e.what();
  }
  setenv("STRATA_BLAS_GEMM", "1", 1);
  EXPECT_TRUE(linearUsesBlas(o.x, o.weight, o.bias));
  unsetenv("STRATA_BLAS_GEMM");
}

}  // namespace
}  // namespace strata::ops
