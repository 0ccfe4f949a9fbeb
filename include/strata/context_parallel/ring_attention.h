// Ring attention: causal softmax attention over sequences split across the
// ranks of a context-parallel group, each rank holding the tokens that
// sequence_layout.h assigns it (chunks r and 2 cp - 1 - r).
//
// Forward: in cp steps every rank attends its queries to every rank's keys
// and values, which travel one hop around the ring per step (to rank r + 1,
// from rank r - 1) while the current block is being computed, so the
// transfer hides behind the arithmetic. The partial results merge exactly by
// their log-sum-exp (online softmax). With the load-balanced chunks each
// step costs every rank the same: its own block is causal, a block from an
// earlier rank meets all its queries with that rank's first chunk, a block
// from a later rank meets its second chunk with all that rank's keys.
//
// Backward recomputes each block's probabilities from the saved log-sum-exp
// (nothing of size s x s is kept between passes): the blocks travel the ring
// again, each with the gradient of its keys and values, which every rank
// adds to and which arrives back at its owner after cp hops.
//
// q [b, H, s, d] with s = S / cp; k, v [b, K, s, d] with K dividing H (each
// kv head serves H / K consecutive query heads; only K heads travel).
// Returns [b, H, s, d] in q's type.
//
// Blocks in point-to-point messages of `cp` in forward and backward, each
// bounded by the communicator's timeout (TimeoutError / PeerError naming
// the peer). Every rank of the group must call it alike; `cp` must outlive
// backward. cp.size() == 1 is plain causal attention.
//
// Packed documents: with `segments`, the whole sequences' [b, S]
// (packed_documents.h), each query sees only the keys of its own document.
// Every rank knows every block's segments (the batch is on every rank), so
// the mask costs no message; a block none of whose queries shares a
// document with its keys is skipped, forward and backward, while the ring
// still passes it on.
#pragma once

#include <ATen/core/Tensor.h>

#include "strata/runtime/communicator.h"

namespace strata::context_parallel {

// Where a rank's time in ring attention went, forward and backward together:
// computing blocks; waiting for key/value hops still in flight once its
// block was done (the transfer time not hidden behind compute); and in
// backward waiting for the key/value gradients the previous rank adds to
// (which also waits for that rank's compute). For benchmarks; the object
// must outlive backward.
struct RingTiming {
  double computeSeconds = 0;
  double computeCpuSeconds =
      0;  // the same by the thread's CPU clock: the work, not the wait for a core
  double hopWaitSeconds = 0;
  double gradientWaitSeconds = 0;
  int64_t hops = 0;  // key/value hops waited for (forward and backward)
};

at::Tensor ringAttention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                         Communicator& cp, RingTiming* timing = nullptr,
                         const at::Tensor& segments = {});

}  // namespace strata::context_parallel
