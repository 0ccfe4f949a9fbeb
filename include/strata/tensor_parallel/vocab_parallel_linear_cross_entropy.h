// The LM head's product and its cross-entropy in one function, chunk by
// chunk over the tokens, so that the float32 logits of a whole micro-batch
// never exist: with GPT-2's 50257 logits a token, those passes over memory
// (the cast, the max, the exponential, the softmax, its gradient) were most
// of a small model's step.
//
// hidden [T, H] is the final LayerNorm's output, already in the tensor
// region (copyToTensorRegion, or gathered from the sequence region, so that
// its gradient is summed over tp); weight [Vp/p, H] is this rank's rows of
// the head's weight, rows whose global index is `vocab` or beyond being
// padding; targets [T] are global ids in [0, vocab).
//
// Per chunk of tokens, with z = hidden W^T in the autocast dtype when autocast
// is on for hidden's device (else in float32):
//   M = max over the vocabulary (all-reduce max), S = sum exp(z - M) and
//   z_t - M (one all-reduce sum), loss = log S - (z_t - M),
//   dloss/dz = softmax(z) - onehot(t).
// The gradients of hidden and of the weight are computed in the forward
// from that chunk's softmax while it is in cache; backward only scales them.
//
// Returns the mean loss over the T tokens (float32 scalar), identical on
// every tp rank. Blocks in two all-reduces per chunk; throws ConfigError,
// before communicating, when the shapes disagree or a target is outside
// the vocabulary.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

#include "strata/runtime/communicator.h"

namespace strata::tensor_parallel {

struct LinearCrossEntropyChunks {
  // Float32 logits per chunk: small enough to stay in a core's share of the
  // last-level cache through the chunk's passes.
  int64_t chunkBytes = int64_t{4} << 20;
  // Tokens whose softmax is kept (in the product's dtype) for one product
  // giving the weight's gradient: one pass over that gradient per group.
  int64_t groupTokens = 1024;
};

at::Tensor vocabParallelLinearCrossEntropy(const at::Tensor& hidden, const at::Tensor& weight,
                                           const at::Tensor& targets, int64_t vocab,
                                           Communicator& tp, LinearCrossEntropyChunks chunks = {});

}  // namespace strata::tensor_parallel
