// Causal self-attention over every head of a fused QKV projection, its
// products through the BLAS sgemm LibTorch links (linear.h).
//
// For each sequence and head h: O_h = softmax(Q_h K_h^T / sqrt(d) + causal
// mask) V_h. The written-out form splits the fused projection into q, k and
// v views, multiplies them batch by batch and merges the heads again; its
// backward then stacks three gradients and copies them through two
// permutations into the fused layout. Here each head's products read its rows
// where they lie in the fused tensor (the leading dimension of a GEMM), write
// the output in the merged layout, and the backward writes the q, k and v
// gradients straight into one fused gradient: no split, merge or stack is a
// pass over memory. The scale enters the products (alpha), the mask is
// written into each head's scores while they are in cache, and the softmax
// and its backward are LibTorch's. bench_train's GPT step takes about 6%
// less time this way (docs/step-speed.md).
//
// Results equal the written-out form's to rounding (the GEMM's summation
// order). Nothing blocks or communicates.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

namespace strata::ops {

// fused [s, b, heads * 3 * d], features [heads, 3 (q, k, v), d]
//   -> [s, b, heads * d], features [heads, d].
// Requires causalSelfAttentionUsesBlas(fused); throws c10::Error when the
// last dimension is not a multiple of 3 heads.
at::Tensor causalSelfAttention(const at::Tensor& fused, int64_t heads);

// Whether causalSelfAttention takes `fused`: a contiguous CPU float32
// [s, b, features] tensor outside autocast, with a BLAS sgemm loaded and
// not turned off (STRATA_BLAS_GEMM=0).
bool causalSelfAttentionUsesBlas(const at::Tensor& fused);

}  // namespace strata::ops
