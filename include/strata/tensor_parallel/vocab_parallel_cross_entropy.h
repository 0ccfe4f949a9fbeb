// Cross-entropy over vocab-parallel logits, without ever forming the full
// logits on one rank. With z the logits of one token split as [z_1 ... z_p]
// over tp and t its target:
//   M = max_r max_j z_r[j]                       (all-reduce max)
//   S = sum_r sum_j exp(z_r[j] - M),  z_t - M    (one all-reduce sum of both)
//   loss = log S - (z_t - M)
//   dloss/dz_r = softmax(z)_r - onehot(t)_r      (local: exp(z_r - M) / S)
//
// logits [..., V/p] (float), targets [...] (int64 global ids in [0, V)).
// Returns per-token losses [...], identical on every tp rank; backward needs
// no communication. Blocks in two all-reduces; throws ConfigError when the
// leading shapes differ (before communicating).
#pragma once

#include <ATen/core/Tensor.h>

#include "strata/runtime/communicator.h"

namespace strata::tensor_parallel {

at::Tensor vocabParallelCrossEntropy(const at::Tensor& logits, const at::Tensor& targets,
                                     Communicator& tp);

}  // namespace strata::tensor_parallel
