#include "block_attention.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>

namespace strata::context_parallel::detail {
namespace {

// Scores, probabilities and their gradients exist a tile of query rows at a
// time, each at most this many float32 elements ([b, H, rows, n]), so a
// block's transient memory stays bounded however long the sequence: a
// rank's memory grows with its tokens, not with their square.
constexpr int64_t kTileElements = int64_t{1} << 20;

double scaleOf(const at::Tensor& q) { return 1.0 / std::sqrt(static_cast<double>(q.size(-1))); }

int64_t rowsPerTile(const at::Tensor& q, const at::Tensor& k) {
  int64_t perRow = q.size(0) * q.size(1) * k.size(2);
  return std::max<int64_t>(1, kTileElements / std::max<int64_t>(1, perRow));
}

// [b, H, m, n] float32 scores of query rows first .. first + m - 1 of the
// block; the keys the mask hides from a row are -inf.
at::Tensor scores(const at::Tensor& q, const at::Tensor& k, const BlockMask& mask, int64_t first) {
  at::Tensor s = at::matmul(q, k.transpose(-2, -1)).to(at::kFloat) * scaleOf(q);
  if (mask.causal) {
    auto options = q.options().dtype(at::kLong);
    at::Tensor rows = at::arange(first, first + q.size(2), options).unsqueeze(1);  // [m, 1]
    at::Tensor cols = at::arange(k.size(2), options).unsqueeze(0);                 // [1, n]
    s.masked_fill_(cols > rows, -INFINITY);
  }
  if (mask.querySegments.defined()) {
    at::Tensor queries = mask.querySegments.narrow(1, first, q.size(2)).unsqueeze(2);  // [b, m, 1]
    at::Tensor others = queries.ne(mask.keySegments.unsqueeze(1));                     // [b, m, n]
    s.masked_fill_(others.unsqueeze(1), -INFINITY);
  }
  return s;
}

// A row's log-sum-exp to subtract: 0 where every key is hidden (-inf), so
// its probabilities come out 0 instead of NaN.
at::Tensor finiteOrZero(const at::Tensor& lse) { return lse.masked_fill(lse.isneginf(), 0); }

}  // namespace

BlockOutput blockForward(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                         const BlockMask& mask) {
  int64_t m = q.size(2), tile = rowsPerTile(q, k);
  at::Tensor values = v.to(at::kFloat);
  at::Tensor out = at::empty({q.size(0), q.size(1), m, v.size(3)}, q.options().dtype(at::kFloat));
  at::Tensor lse = at::empty({q.size(0), q.size(1), m}, out.options());
  for (int64_t first = 0; first < m; first += tile) {
    int64_t rows = std::min(tile, m - first);
    at::Tensor s = scores(q.narrow(2, first, rows), k, mask, first);  // [b, H, rows, n]
    at::Tensor rowLse = at::logsumexp(s, -1);                         // [b, H, rows]
    at::Tensor p = at::exp(s - finiteOrZero(rowLse).unsqueeze(-1));
    out.narrow(2, first, rows).copy_(at::matmul(p, values));  // [b, H, rows, d]
    lse.narrow(2, first, rows).copy_(rowLse);
  }
  return {out, lse};
}

void mergeBlock(at::Tensor& out, at::Tensor& lse, const BlockOutput& block) {
  at::Tensor merged = at::logaddexp(lse, block.lse);  // [b, H, m]
  // Rows that no key has reached yet, on either side, stay (0, -inf).
  at::Tensor base = finiteOrZero(merged);
  out.mul_(at::exp(lse - base).unsqueeze(-1))
      .add_(block.out * at::exp(block.lse - base).unsqueeze(-1));
  lse.copy_(merged);
}

BlockGradients blockBackward(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                             const BlockMask& mask, const at::Tensor& dout, const at::Tensor& lse,
                             const at::Tensor& delta) {
  double scale = scaleOf(q);
  int64_t m = q.size(2), tile = rowsPerTile(q, k);
  at::Tensor keys = k.to(at::kFloat), values = v.to(at::kFloat);
  at::Tensor dq = at::empty(q.sizes(), q.options().dtype(at::kFloat));  // [b, H, m, d]
  at::Tensor dk = at::zeros(k.sizes(), dq.options());                   // [b, H, n, d]
  at::Tensor dv = at::zeros(v.sizes(), dq.options());
  for (int64_t first = 0; first < m; first += tile) {
    int64_t rows = std::min(tile, m - first);
    at::Tensor query = q.narrow(2, first, rows);
    at::Tensor p = at::exp(scores(query, k, mask, first) -
                           lse.narrow(2, first, rows).unsqueeze(-1));  // [b, H, rows, n]
    at::Tensor gradOut = dout.narrow(2, first, rows).to(at::kFloat);   // [b, H, rows, d]
    dv.add_(at::matmul(p.transpose(-2, -1), gradOut));                 // [b, H, n, d]
    at::Tensor dp = at::matmul(gradOut, values.transpose(-2, -1));     // [b, H, rows, n]
    at::Tensor ds = p * (dp - delta.narrow(2, first, rows).unsqueeze(-1));
    dq.narrow(2, first, rows).copy_(at::matmul(ds, keys) * scale);
    dk.add_(at::matmul(ds.transpose(-2, -1), query.to(at::kFloat)) * scale);
  }
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
