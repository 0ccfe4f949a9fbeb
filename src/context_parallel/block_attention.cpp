#include "block_attention.h"

#include <torch/torch.h>

#include <cmath>

namespace strata::context_parallel::detail {
namespace {

double scaleOf(const at::Tensor& q) { return 1.0 / std::sqrt(static_cast<double>(q.size(-1))); }

// [b, H, m, n] float32 scores, the future masked when causal.
at::Tensor scores(const at::Tensor& q, const at::Tensor& k, bool causal) {
  at::Tensor s = at::matmul(q, k.transpose(-2, -1)).to(at::kFloat) * scaleOf(q);
  if (!causal) return s;
  at::Tensor future =
      at::ones({q.size(2), k.size(2)}, q.options().dtype(at::kBool)).triu(1);  // [m, n]
  return s.masked_fill(future, -INFINITY);
}

}  // namespace

BlockOutput blockForward(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                         bool causal) {
  at::Tensor s = scores(q, k, causal);            // [b, H, m, n]
  at::Tensor lse = at::logsumexp(s, -1);          // [b, H, m]
  at::Tensor p = at::exp(s - lse.unsqueeze(-1));  // [b, H, m, n]
  return {at::matmul(p, v.to(at::kFloat)), lse};  // [b, H, m, d]
}

void mergeBlock(at::Tensor& out, at::Tensor& lse, const BlockOutput& block) {
  at::Tensor merged = at::logaddexp(lse, block.lse);  // [b, H, m]
  out.mul_(at::exp(lse - merged).unsqueeze(-1))
      .add_(block.out * at::exp(block.lse - merged).unsqueeze(-1));
  lse.copy_(merged);
}

BlockGradients blockBackward(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                             bool causal, const at::Tensor& dout, const at::Tensor& lse,
                             const at::Tensor& delta) {
  double scale = scaleOf(q);
  at::Tensor p = at::exp(scores(q, k, causal) - lse.unsqueeze(-1));         // [b, H, m, n]
  at::Tensor gradOut = dout.to(at::kFloat);                                 // [b, H, m, d]
  at::Tensor dv = at::matmul(p.transpose(-2, -1), gradOut);                 // [b, H, n, d]
  at::Tensor dp = at::matmul(gradOut, v.to(at::kFloat).transpose(-2, -1));  // [b, H, m, n]
  at::Tensor ds = p * (dp - delta.unsqueeze(-1));
  at::Tensor dq = at::matmul(ds, k.to(at::kFloat)) * scale;                    // [b, H, m, d]
  at::Tensor dk = at::matmul(ds.transpose(-2, -1), q.to(at::kFloat)) * scale;  // [b, H, n, d]
  return {dq, dk, dv};
}

at::Tensor repeatKvHeads(const at::Tensor& kv, int64_t heads) {
  int64_t group = heads / kv.size(1);
  return group == 1 ? kv : kv.repeat_interleave(group, 1);
}

at::Tensor foldKvHeads(const at::Tensor& grad, int64_t kvHeads) {
  int64_t heads = grad.size(1);
  if (heads == kvHeads) return grad;
  return grad.view({grad.size(0), kvHeads, heads / kvHeads, grad.size(2), grad.size(3)}).sum(2);
}

}  // namespace strata::context_parallel::detail
