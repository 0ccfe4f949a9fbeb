// Causal softmax attention of whole heads, shared by the attention layers:
//
//   probabilities = softmax(Q K^T / sqrt(d), positions j > i masked)
//   attention     = probabilities V
//
// q, k, v [b, heads, s, d] (k and v with as many heads as q). Pure tensor
// arithmetic: nothing blocks or communicates.
#pragma once

#include <ATen/core/Tensor.h>

namespace strata::context_parallel::detail {

// [b, heads, s, s]
at::Tensor causalProbabilities(const at::Tensor& q, const at::Tensor& k);

// [b, heads, s, d]; through the fused kernel where LibTorch has one (2.x:
// flash attention on CUDA), which never materialises the [s, s] scores.
at::Tensor causalAttention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v);

}  // namespace strata::context_parallel::detail
