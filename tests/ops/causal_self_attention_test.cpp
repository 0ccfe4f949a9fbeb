// ops::causalSelfAttention against attention written out in plain LibTorch
// (split the fused projection, multiply, mask, softmax, multiply, merge):
// the output and the fused projection's gradient, on one and on two
// threads, and the operands it refuses.
#include "strata/ops/causal_self_attention.h"

#include <ATen/Parallel.h>
#include <ATen/autocast_mode.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <cstdlib>

#include "relative_error.h"
#include "runtime/torch_compat.h"

namespace strata::ops {
namespace {

constexpr int64_t kHeads = 2;

// [s 5, b 3, heads 2 x 3 x d 4]: an odd sequence, more than one sequence and
// head, so that a head's rows lie apart in the fused tensor.
at::Tensor fusedProjection() {
  torch::manual_seed(5);
  return torch::randn({5, 3, kHeads * 3 * 4}, torch::requires_grad());
}

// The same attention written out: [s, b, H*3*d] -> [s, b, H*d].
at::Tensor writtenOut(const at::Tensor& fused) {
  int64_t s = fused.size(0), b = fused.size(1), d = fused.size(2) / (3 * kHeads);
  at::Tensor heads = fused.view({s, b, kHeads, 3, d}).permute({3, 1, 2, 0, 4});  // [3, b, H, s, d]
  at::Tensor q = heads[0], k = heads[1], v = heads[2];
  at::Tensor scores = torch::matmul(q, k.transpose(-2, -1)) / std::sqrt(static_cast<double>(d));
  at::Tensor future = torch::ones({s, s}, torch::kBool).triu(1);
  at::Tensor probs = torch::softmax(scores.masked_fill(future, -INFINITY), -1);
  return torch::matmul(probs, v).permute({2, 0, 1, 3}).reshape({s, b, kHeads * d});
}

// GTEST_SKIP returns from the function it is in: the tests skip themselves.
bool attentionRunsOnBlas() { return causalSelfAttentionUsesBlas(fusedProjection().detach()); }

TEST(CausalSelfAttention, OutputAndGradientEqualTheWrittenOutForm) {
  if (!attentionRunsOnBlas()) GTEST_SKIP() << "this LibTorch exports no BLAS sgemm_";
  int threads = at::get_num_threads();
  for (int t : {1, 2}) {
    at::set_num_threads(t);
    at::Tensor mine = fusedProjection(), theirs = fusedProjection();
    at::Tensor seed = torch::randn({5, 3, kHeads * 4});
    at::Tensor out = causalSelfAttention(mine, kHeads);
    at::Tensor expected = writtenOut(theirs);
    ASSERT_EQ(out.sizes(), expected.sizes());
    EXPECT_LT(relativeError(out, expected), 1e-6) << t << " threads";
    out.backward(seed);
    expected.backward(seed);
    EXPECT_LT(relativeError(mine.grad(), theirs.grad()), 1e-6) << t << " threads";
  }
  at::set_num_threads(threads);
}

TEST(CausalSelfAttention, LeavesOtherOperandsToTheWrittenOutForm) {
  if (!attentionRunsOnBlas()) GTEST_SKIP() << "this LibTorch exports no BLAS sgemm_";
  at::Tensor fused = fusedProjection().detach();
  EXPECT_FALSE(causalSelfAttentionUsesBlas(fused.to(at::kDouble)));
  EXPECT_FALSE(causalSelfAttentionUsesBlas(fused.transpose(0, 1)));
  strata::compat::setAutocast(at::kCPU, true, at::kBFloat16);
  EXPECT_FALSE(causalSelfAttentionUsesBlas(fused));
  strata::compat::setAutocast(at::kCPU, false, at::kBFloat16);
  setenv("STRATA_BLAS_GEMM", "0", 1);
  EXPECT_FALSE(causalSelfAttentionUsesBlas(fused));
  unsetenv("STRATA_BLAS_GEMM");
  EXPECT_TRUE(causalSelfAttentionUsesBlas(fused));
}

TEST(CausalSelfAttention, AProjectionNotOfThreeHeadsIsNamed) {
  if (!attentionRunsOnBlas()) GTEST_SKIP() << "this LibTorch exports no BLAS sgemm_";
  at::Tensor fused = fusedProjection().detach();
  try {
    causalSelfAttention(fused, 5);
    ADD_FAILURE() << "24 features were taken as 5 heads of q, k and v";
  } catch (const c10::Error& e) {
    EXPECT_NE(std::string(e.what()).find("with 5 heads"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace strata::ops
