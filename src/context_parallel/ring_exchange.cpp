#include "ring_exchange.h"

namespace strata::context_parallel::detail {

int nextRank(const Communicator& ring) { return (ring.rank() + 1) % ring.size(); }
int previousRank(const Communicator& ring) { return (ring.rank() + ring.size() - 1) % ring.size(); }

RingHop::RingHop(Communicator& ring, const at::Tensor& out, at::Tensor& in, int tag) {
  if (ring.rank() % 2 == 0) {
    send_ = ring.sendAsync(out, nextRank(ring), tag);
    recv_ = ring.recvAsync(in, previousRank(ring), tag);
  } else {
    recv_ = ring.recvAsync(in, previousRank(ring), tag);
    send_ = ring.sendAsync(out, nextRank(ring), tag);
  }
}

void RingHop::wait() {
  recv_->wait();
  send_->wait();
}

}  // namespace strata::context_parallel::detail
