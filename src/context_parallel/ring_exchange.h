// One hop around a ring of ranks: a send to the next rank and a receive from
// the previous one, both started at once and finished later, so the caller
// computes while the bytes move.
//
// Even ranks post their send first and odd ranks their receive, so a
// transport whose sends wait for the matching receive (NCCL's) cannot
// deadlock two neighbours that both send first.
//
// wait() blocks until both finished, at most the communicator's timeout per
// operation (TimeoutError / PeerError naming the peer).
#pragma once

#include <ATen/core/Tensor.h>

#include "strata/runtime/communicator.h"

namespace strata::context_parallel::detail {

int nextRank(const Communicator& ring);
int previousRank(const Communicator& ring);

class RingHop {
 public:
  // Sends `out` to the next rank and receives into `in` from the previous
  // one, with `tag`; both tensors must stay alive until wait().
  RingHop(Communicator& ring, const at::Tensor& out, at::Tensor& in, int tag);
  void wait();

 private:
  WorkHandle send_, recv_;
};

}  // namespace strata::context_parallel::detail
