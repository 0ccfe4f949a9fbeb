// Softmax attention of one block of queries against one block of keys, in
// the pieces ring attention assembles: each block's output comes with its
// rows' log-sum-exp, so blocks merge exactly (online softmax), and backward
// recomputes a block's probabilities from the merged log-sum-exp instead of
// keeping them.
//
// For q [b, H, m, d] and k, v [b, H, n, d] (kv heads already repeated for
// their query heads), scale = 1 / sqrt(d):
//   S = q k^T scale (positions above the diagonal -inf when causal, m == n;
//       with segments, -inf where query and key are of different documents)
//   lse = log sum_j exp(S_ij),  P = exp(S - lse),  out = P v
// and with dout, the final lse and D = rowsum(dout * out):
//   dv = P^T dout,  dS = P * (dout v^T - D),  dq = dS k scale,  dk = dS^T q scale
//
// Scores, log-sum-exps and accumulators are float32 whatever the inputs'
// type. The score-sized tensors exist one tile of query rows at a time
// (block_attention.cpp), so a block's transient memory is bounded. Pure
// tensor arithmetic: nothing blocks or communicates.
#pragma once

#include <ATen/core/Tensor.h>

namespace strata::context_parallel::detail {

// Which keys of a block each query may see.
struct BlockMask {
  bool causal = false;       // not those after the query's own position (m == n)
  at::Tensor querySegments;  // [b, m] int64: packed documents; undefined: one document
  at::Tensor keySegments;    // [b, n] int64
};

// A query none of whose keys it may see has no output from this block (its
// out row 0, its lse -inf), and merging leaves running rows unchanged.
struct BlockOutput {
  at::Tensor out;  // [b, H, m, d] float32
  at::Tensor lse;  // [b, H, m] float32
};

BlockOutput blockForward(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                         const BlockMask& mask);

// Folds a block into running (out, lse) rows: out, lse are updated in place.
void mergeBlock(at::Tensor& out, at::Tensor& lse, const BlockOutput& block);

struct BlockGradients {
  at::Tensor dq;  // [b, H, m, d] float32
  at::Tensor dk;  // [b, H, n, d] float32
  at::Tensor dv;  // [b, H, n, d] float32
};

// lse and delta: [b, H, m], the final log-sum-exp and rowsum(dout * out).
BlockGradients blockBackward(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                             const BlockMask& mask, const at::Tensor& dout, const at::Tensor& lse,
                             const at::Tensor& delta);

// k or v [b, K, n, d] -> [b, H, n, d]: each kv head repeated for the group
// of H / K consecutive query heads that reads it.
at::Tensor repeatKvHeads(const at::Tensor& kv, int64_t heads);

// The adjoint of repeatKvHeads: [b, H, n, d] -> [b, K, n, d], summing each group.
at::Tensor foldKvHeads(const at::Tensor& grad, int64_t kvHeads);

}  // namespace strata::context_parallel::detail
