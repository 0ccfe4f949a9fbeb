#include "causal_attention.h"

#include <torch/torch.h>

#include <cmath>

#include "runtime/torch_compat.h"
#include "strata/context_parallel/packed_documents.h"

namespace strata::context_parallel::detail {

at::Tensor causalProbabilities(const at::Tensor& q, const at::Tensor& k,
                               const at::Tensor& segments) {
  int64_t b = q.size(0), heads = q.size(1), s = q.size(2), d = q.size(3);
  double scale = 1.0 / std::sqrt(static_cast<double>(d));
  // 0 where key j <= query i, -inf after: added to the scores by the product
  // itself (baddbmm's beta), scaled there too (alpha), so neither the scale
  // nor the mask is a pass over the [s, s] scores, forward or backward.
  at::Tensor future = at::full({s, s}, -INFINITY, q.options()).triu_(1);
  at::Tensor scores = at::baddbmm(future, q.reshape({b * heads, s, d}),
                                  k.reshape({b * heads, s, d}).transpose(1, 2), 1.0, scale);
  scores = scores.view({b, heads, s, s});
  if (segments.defined())
    scores =
        scores.masked_fill(documentCausalMask(segments.to(q.device())).logical_not(), -INFINITY);
  return at::softmax(scores, -1);
}

at::Tensor causalAttention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) {
  return compat::causalAttention(q, k, v);
}

at::Tensor documentAttention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                             const at::Tensor& segments) {
  // Every query sees at least itself, so no row of the mask is empty.
  return at::scaled_dot_product_attention(q, k, v, documentCausalMask(segments.to(q.device())));
}

}  // namespace strata::context_parallel::detail
