// Receives one step's remote messages on a background thread, in the order
// this rank will consume them, so each message crosses the wire while the
// rank computes the actions before the one that needs it.
//
// Why: Gloo moves a point-to-point payload only after the receiver has posted
// its receive (a rendezvous), so a receive posted at the moment of need puts
// a round trip plus the whole transfer on the critical path. In 1F1B's steady
// state each rank waits for the other at every action, so that latency is
// paid twice per micro-batch.
//
// Blocking: take() waits until the message with that tag has arrived, at most
// the communicator's timeout (then TimeoutError), and rethrows whatever the
// receiving thread hit (TimeoutError, PeerError, ProtocolError from the
// communicator). finish() joins the thread. A prefetcher destroyed mid-step
// (the step threw) detaches the thread, which ends at its receive's timeout
// or when the peer goes away, so a failing rank exits at once.
#pragma once

#include <ATen/core/Tensor.h>

#include <memory>
#include <set>
#include <thread>
#include <vector>

#include "strata/runtime/communicator.h"

namespace strata::pipeline {

class RecvPrefetcher {
 public:
  struct Expected {
    int peer;
    int tag;
    at::Device device;
  };

  explicit RecvPrefetcher(std::shared_ptr<Communicator> comm);
  ~RecvPrefetcher();

  // Starts receiving `expected` in order; the previous step must be finished.
  void start(std::vector<Expected> expected);
  // The message with `tag` (one of start()'s), once arrived.
  at::Tensor take(int tag);
  // Waits for the thread; throws what it hit if take() has not already.
  void finish();

 private:
  struct Shared;
  std::shared_ptr<Communicator> comm_;
  std::shared_ptr<Shared> shared_;
  std::set<int> expectedTags_;
  std::thread thread_;
};

}  // namespace strata::pipeline
