#include "causal_attention.h"

#include <torch/torch.h>

#include <cmath>

#include "runtime/torch_compat.h"

namespace strata::context_parallel::detail {

at::Tensor causalProbabilities(const at::Tensor& q, const at::Tensor& k) {
  int64_t s = q.size(2);
  double scale = 1.0 / std::sqrt(static_cast<double>(q.size(3)));
  at::Tensor scores = at::matmul(q, k.transpose(-2, -1)) * scale;  // [b, heads, s, s]
  at::Tensor future = at::ones({s, s}, q.options().dtype(at::kBool)).triu(1);
  return at::softmax(scores.masked_fill(future, -INFINITY), -1);
}

at::Tensor causalAttention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) {
#if STRATA_HAS_SDPA
  return compat::causalAttention(q, k, v);
#else
  return at::matmul(causalProbabilities(q, k), v);
#endif
}

}  // namespace strata::context_parallel::detail
