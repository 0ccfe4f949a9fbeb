#include "strata/ops/causal_self_attention.h"

#include <ATen/Parallel.h>
#include <ATen/autocast_mode.h>
#include <torch/autograd.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "blas_gemm.h"

namespace strata::ops {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::tensor_list;

// Where one (sequence, head) pair's matrices lie. The fused projection is
// [s, b, H, 3, d] and the merged output [s, b, H, d]: pair n = sequence *
// H + head has its q rows at fused + n*3d, k at + d, v at + 2d, each row
// `fusedRow` floats after the one before; its output rows at out + n*d,
// `mergedRow` apart; its [s, s] scores at n*s*s of a [b*H, s, s] tensor.
struct HeadLayout {
  int64_t tokens;     // s
  int64_t pairs;      // b * H
  int64_t headDim;    // d
  int64_t fusedRow;   // b * H * 3d
  int64_t mergedRow;  // b * H * d
  float scale;        // 1 / sqrt(d)

  HeadLayout(const at::Tensor& fused, int64_t heads)
      : tokens(fused.size(0)),
        pairs(fused.size(1) * heads),
        headDim(fused.size(2) / (3 * heads)),
        fusedRow(fused.size(1) * fused.size(2)),
        mergedRow(fused.size(1) * heads * headDim),
        scale(static_cast<float>(1.0 / std::sqrt(static_cast<double>(headDim)))) {}

  int64_t q(int64_t n) const { return n * 3 * headDim; }
  int64_t k(int64_t n) const { return q(n) + headDim; }
  int64_t v(int64_t n) const { return q(n) + 2 * headDim; }
  int64_t merged(int64_t n) const { return n * headDim; }
  int64_t scores(int64_t n) const { return n * tokens * tokens; }
};

// Runs body(n) for every pair, spread over LibTorch's intra-op threads (a
// GEMM inside runs on its caller's thread).
template <typename Body>
void forEachPair(const HeadLayout& l, const Body& body) {
  at::parallel_for(0, l.pairs, 1, [&](int64_t begin, int64_t end) {
    for (int64_t n = begin; n < end; ++n) body(n);
  });
}

// Key j > query i is hidden: -inf above the diagonal of one head's [s, s]
// scores, written while the product has left them in cache.
void maskFuture(float* scores, int64_t s) {
  for (int64_t i = 0; i < s; ++i)
    std::fill(scores + i * s + i + 1, scores + (i + 1) * s,
              -std::numeric_limits<float>::infinity());
}

struct CausalSelfAttention : torch::autograd::Function<CausalSelfAttention> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& fused, int64_t heads) {
    HeadLayout l(fused, heads);
    int64_t s = l.tokens;
    const float* qkv = fused.data_ptr<float>();
    at::Tensor scores = at::empty({l.pairs, s, s}, fused.options());  // [b*H, s, s]
    float* sc = scores.data_ptr<float>();
    forEachPair(l, [&](int64_t n) {  // S = Q K^T / sqrt(d), masked
      detail::sgemm(false, true, s, s, l.headDim, l.scale, qkv + l.q(n), l.fusedRow, qkv + l.k(n),
                    l.fusedRow, 0.0f, sc + l.scores(n), s);
      maskFuture(sc + l.scores(n), s);
    });
    at::Tensor probs = at::softmax(scores, -1);  // [b*H, s, s]
    scores.reset();
    at::Tensor out = at::empty({s, fused.size(1), heads * l.headDim}, fused.options());
    const float* p = probs.data_ptr<float>();
    float* o = out.data_ptr<float>();
    forEachPair(l, [&](int64_t n) {  // O = P V
      detail::sgemm(false, false, s, l.headDim, s, 1.0f, p + l.scores(n), s, qkv + l.v(n),
                    l.fusedRow, 0.0f, o + l.merged(n), l.mergedRow);
    });
    ctx->save_for_backward({fused, probs});
    ctx->saved_data["heads"] = heads;
    return out;
  }

  static tensor_list backward(AutogradContext* ctx, tensor_list outputGrads) {
    tensor_list saved = ctx->get_saved_variables();
    const at::Tensor& fused = saved[0];
    const at::Tensor& probs = saved[1];
    HeadLayout l(fused, ctx->saved_data["heads"].toInt());
    int64_t s = l.tokens;
    at::Tensor grad = outputGrads[0].contiguous();  // [s, b, H*d]
    const float* qkv = fused.data_ptr<float>();
    const float* p = probs.data_ptr<float>();
    const float* dO = grad.data_ptr<float>();
    at::Tensor gradFused = at::empty_like(fused);  // [s, b, H*3d]: every element written
    float* dQkv = gradFused.data_ptr<float>();
    at::Tensor gradProbs = at::empty_like(probs);  // [b*H, s, s]
    float* dP = gradProbs.data_ptr<float>();
    forEachPair(l, [&](int64_t n) {
      // dP = dO V^T, dV = P^T dO
      detail::sgemm(false, true, s, s, l.headDim, 1.0f, dO + l.merged(n), l.mergedRow, qkv + l.v(n),
                    l.fusedRow, 0.0f, dP + l.scores(n), s);
      detail::sgemm(true, false, s, l.headDim, s, 1.0f, p + l.scores(n), s, dO + l.merged(n),
                    l.mergedRow, 0.0f, dQkv + l.v(n), l.fusedRow);
    });
    // dS = P * (dP - rowsum(dP * P)): zero wherever P is (the masked keys).
    at::Tensor gradScores = at::_softmax_backward_data(gradProbs, probs, -1, at::kFloat);
    gradProbs.reset();
    const float* dS = gradScores.data_ptr<float>();
    forEachPair(l, [&](int64_t n) {
      // dQ = dS K / sqrt(d), dK = dS^T Q / sqrt(d)
      detail::sgemm(false, false, s, l.headDim, s, l.scale, dS + l.scores(n), s, qkv + l.k(n),
                    l.fusedRow, 0.0f, dQkv + l.q(n), l.fusedRow);
      detail::sgemm(true, false, s, l.headDim, s, l.scale, dS + l.scores(n), s, qkv + l.q(n),
                    l.fusedRow, 0.0f, dQkv + l.k(n), l.fusedRow);
    });
    return {gradFused, at::Tensor()};
  }
};

}  // namespace

bool causalSelfAttentionUsesBlas(const at::Tensor& fused) {
  return detail::blasGemmEnabled() && !at::autocast::is_autocast_enabled(at::kCPU) &&
         fused.dim() == 3 && fused.device().is_cpu() && fused.scalar_type() == at::kFloat &&
         fused.is_contiguous() && fused.numel() > 0;
}

at::Tensor causalSelfAttention(const at::Tensor& fused, int64_t heads) {
  TORCH_CHECK(heads > 0 && fused.dim() == 3 && fused.size(2) % (3 * heads) == 0,
              "causalSelfAttention: a fused projection [s, b, heads * 3 * d] with ", heads,
              " heads, got ", fused.sizes());
  return CausalSelfAttention::apply(fused, heads);
}

}  // namespace strata::ops
