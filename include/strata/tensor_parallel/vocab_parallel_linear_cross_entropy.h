// The LM head's product and its cross-entropy in one function, chunk by
// chunk over the tokens: the float32 logits exist one chunk (about
// chunkBytes) at a time, and the softmax kept for the gradients' products
// at most groupTokens tokens at a time, in the products' dtype. With
// GPT-2's 50257 logits a token the whole logits of a micro-batch, their
// float32 copy and the saved softmax would be held instead
// (bench_head_loss: 483 MB against 1667 MB of resident peak at 4096 tokens).
//
// hidden [T, H] is the final LayerNorm's output, already in the tensor
// region (copyToTensorRegion, or gathered from the sequence region, so that
// its gradient is summed over tp); weight [Vp/p, H] is this rank's rows of
// the head's weight, rows whose global index is `vocab` or beyond being
// padding; targets [T] are global ids in [0, vocab).
//
// The products z = hidden W^T run in autocast's dtype where autocast is on
// for hidden's device (the weight's cast is autocast's cached one), else in
// the inputs' dtype; with gradients wanted a group's logits are one product.
// Per chunk, in float32, each rank takes its columns' log-sum-exp with one
// exponential an entry (lse_r = m + log sum_j exp(z_j - m), m the row's
// largest logit); over tp the ranks' combine (lse = log sum_r exp(lse_r),
// two all-reduces, the second also summing the target's logit from its
// owner):
//   loss = lse - z_t,  dloss/dz = p - onehot(t),  p_j = exp(z_j - lse).
// The gradients of hidden and of the weight are computed in the forward
// from each group's p (the weight's only when it requires grad: a frozen
// head, LoRA's, costs no product); backward only scales them by the
// incoming gradient.
//
// Returns the mean loss over the T tokens (float32 scalar), identical on
// every tp rank; with tokenWeights w [T] (float32) the weighted sum
// sum_t w_t loss_t instead, each token's gradients scaled by its w_t (a
// weight of 0 leaves a token out, whatever its target). Blocks in two all-reduces per chunk when tp
// > 1; throws ConfigError, before communicating, when the shapes disagree, a target is outside the
// vocabulary or a chunk size is not positive.
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
                                           Communicator& tp, LinearCrossEntropyChunks chunks = {},
                                           const at::Tensor& tokenWeights = {});

}  // namespace strata::tensor_parallel
