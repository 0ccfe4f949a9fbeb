// ops::swiglu against silu(gate) * up written in plain LibTorch here: the
// values and both gradients over a wide range (both tails, zero, a length
// that leaves a partial vector), on one and two intra-op threads, and the
// operands it leaves to tensor operations.
#include "strata/ops/swiglu.h"

#include <ATen/Parallel.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "relative_error.h"

namespace strata::ops {
namespace {

struct Result {
  at::Tensor h, gradGate, gradUp;
};

Result run(bool own, const at::Tensor& gate0, const at::Tensor& up0, const at::Tensor& dh) {
  at::Tensor gate = gate0.clone().requires_grad_();
  at::Tensor up = up0.clone().requires_grad_();
  at::Tensor h = own ? swiglu(gate, up) : gate * torch::sigmoid(gate) * up;
  h.backward(dh);
  return {h.detach(), gate.grad(), up.grad()};
}

TEST(Swiglu, ValuesAndGradientsMatchLibTorchWrittenOut) {
  torch::manual_seed(13);
  // 4099 gates from -30 to 30 (256 vectors of 16 and 3 more), then typical ones.
  at::Tensor gate = torch::cat({torch::linspace(-30, 30, 4099), torch::randn({70000})});
  at::Tensor up = torch::randn_like(gate);
  at::Tensor dh = torch::randn_like(gate);
  if (!swigluUsesOwnKernel(gate, up)) GTEST_SKIP() << "this CPU runs no AVX-512";
  Result expected = run(false, gate, up, dh);
  for (int threads : {1, 2}) {
    SCOPED_TRACE(std::to_string(threads) + " threads");
    int before = at::get_num_threads();
    at::set_num_threads(threads);
    Result own = run(true, gate, up, dh);
    at::set_num_threads(before);
    EXPECT_LT(relativeError(own.h, expected.h), 1e-6);
    EXPECT_LT(relativeError(own.gradGate, expected.gradGate), 1e-6);
    EXPECT_LT(relativeError(own.gradUp, expected.gradUp), 1e-6);
  }
}

TEST(Swiglu, OtherOperandsTakeLibTorch) {
  at::Tensor gate = torch::randn({4, 6});
  EXPECT_FALSE(swigluUsesOwnKernel(gate.t(), torch::randn({6, 4})));              // strided
  EXPECT_FALSE(swigluUsesOwnKernel(gate.to(at::kDouble), gate.to(at::kDouble)));  // float64
  EXPECT_FALSE(swigluUsesOwnKernel(gate, torch::randn({24})));                    // other shape
}

// What the kernels do not take runs as tensor operations, keeping gate and
// up only, with the written-out form's values and gradients.
TEST(Swiglu, TensorOperationsGiveTheWrittenOutGradients) {
  torch::manual_seed(14);
  at::Tensor gate = torch::randn({5, 9}, torch::kDouble) * 4;
  at::Tensor up = torch::randn({5, 9}, torch::kDouble);
  at::Tensor dh = torch::randn({5, 9}, torch::kDouble);
  ASSERT_FALSE(swigluUsesOwnKernel(gate, up));
  Result own = run(true, gate, up, dh);
  Result expected = run(false, gate, up, dh);
  EXPECT_TRUE(torch::equal(own.h, at::silu(gate) * up));
  EXPECT_LT(relativeError(own.gradGate, expected.gradGate), 1e-12);
  EXPECT_LT(relativeError(own.gradUp, expected.gradUp), 1e-12);
}

}  // namespace
}  // namespace strata::ops
