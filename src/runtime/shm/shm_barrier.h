// A barrier for the processes of one host, living in shared memory.
//
// The last process to arrive bumps a generation counter and wakes the others
// with a futex; a waiter spins briefly (the peer is usually a few
// microseconds behind) and then sleeps on the futex in short slices, between
// which it checks its deadline and whether the processes it waits for are
// still alive.
//
// Blocking: arriveAndWait() blocks until every member has arrived. It throws
// TimeoutError after `timeout`, and PeerError as soon as a member that has not
// arrived is found to have exited; both name `what` and the missing ranks.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

namespace strata {

struct ShmBarrierState {
  static constexpr int kMaxMembers = 64;
  std::atomic<uint32_t> arrived;
  std::atomic<uint32_t> generation;                // the futex word
  std::atomic<uint32_t> lastArrival[kMaxMembers];  // generation each member last passed
  pid_t pids[kMaxMembers];
};

class ShmBarrier {
 public:
  // `state` is in shared memory, zeroed by its creator; each member records
  // its pid with join() before the first arriveAndWait().
  ShmBarrier(ShmBarrierState* state, int members, int rank);
  void join();
  // `whileWaiting` runs between sleeps and may throw to give up waiting.
  void arriveAndWait(std::chrono::milliseconds timeout, const std::string& what,
                     const std::function<void()>& whileWaiting = {});

 private:
  [[noreturn]] void fail(bool timedOut, uint32_t generation, std::chrono::milliseconds timeout,
                         const std::string& what) const;

  ShmBarrierState* state_;
  int members_;
  int rank_;
};

}  // namespace strata
