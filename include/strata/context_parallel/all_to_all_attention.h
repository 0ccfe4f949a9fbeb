// All-to-all (Ulysses) attention: causal softmax attention over sequences
// split across the ranks of a context-parallel group, by trading the split.
// An all-to-all turns each rank's tokens of all heads into all tokens of
// heads / cp heads; every rank then attends whole sequences for its heads
// (with the fused kernel where LibTorch has one), and a second all-to-all
// turns the result back. Backward is the same exchanges reversed.
//
// q [b, H, s, d] with s = S / cp, this rank's tokens (sequence_layout.h);
// k, v [b, K, s, d] with K dividing H. H and K must both be divisible by cp
// (ConfigError naming them otherwise, before anything is sent). Returns
// [b, H, s, d] in q's type. With `segments`, the whole sequences' packed
// documents [b, S] (packed_documents.h), each query sees only its own
// document's keys: the sequences are whole after the exchange, so the mask
// is the one-process mask.
//
// Each exchange moves 3/cp of the activations' q, k and v, and back 1/cp of
// the output, whatever the ring size: cheaper than the ring's cp - 1 blocks
// when cp is large, but limited to cp dividing the heads.
//
// Blocks in point-to-point messages of `cp`, bounded by its timeout
// (TimeoutError / PeerError naming the peer); every rank of the group must
// call it alike; `cp` must outlive backward.
#pragma once

#include <ATen/core/Tensor.h>

#include "strata/runtime/communicator.h"

namespace strata::context_parallel {

// Throws ConfigError unless cp divides both head counts (per tp rank).
void checkAllToAllHeads(int64_t heads, int64_t kvHeads, int cp);

at::Tensor allToAllAttention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                             Communicator& cp, const at::Tensor& segments = {});

}  // namespace strata::context_parallel
