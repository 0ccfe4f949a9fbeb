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

// [b, heads, s, s]. With `segments` [b, s] (packed_documents.h) a query
// sees only the keys of its own document.
at::Tensor causalProbabilities(const at::Tensor& q, const at::Tensor& k,
                               const at::Tensor& segments = {});

// [b, heads, s, d]; through the fused kernel where LibTorch has one (2.x:
// flash attention on CUDA), which never materialises the [s, s] scores.
at::Tensor causalAttention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v);

// The same within packed documents, `segments` [b, s]: the fused kernel
// with a mask of the key positions each query may see.
at::Tensor documentAttention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                             const at::Tensor& segments);

}  // namespace strata::context_parallel::detail
