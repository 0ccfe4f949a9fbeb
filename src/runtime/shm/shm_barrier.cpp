#include "runtime/shm/shm_barrier.h"

#include <string>

#include "runtime/shm/shm_futex.h"
#include "strata/error.h"
#include "strata/runtime/timeouts.h"

namespace strata {
namespace {

// Spin this many polls before sleeping: a few microseconds, about what a peer
// that is just behind needs, and too short to matter when it is far behind.
constexpr int kBarrierSpinPolls = 2000;

}  // namespace

ShmBarrier::ShmBarrier(ShmBarrierState* state, int members, int rank)
    : state_(state), members_(members), rank_(rank) {
  if (members < 1 || members > ShmBarrierState::kMaxMembers) {
    throw ConfigError("a shared-memory barrier holds 1 to " +
                      std::to_string(ShmBarrierState::kMaxMembers) + " members, not " +
                      std::to_string(members));
  }
}

void ShmBarrier::join() { state_->pids[rank_] = getpid(); }

void ShmBarrier::arriveAndWait(std::chrono::milliseconds timeout, const std::string& what,
                               const std::function<void()>& whileWaiting) {
  uint32_t generation = state_->generation.load(std::memory_order_acquire);
  state_->lastArrival[rank_].store(generation + 1, std::memory_order_relaxed);
  if (state_->arrived.fetch_add(1, std::memory_order_acq_rel) + 1 ==
      static_cast<uint32_t>(members_)) {
    state_->arrived.store(0, std::memory_order_relaxed);
    state_->generation.store(generation + 1, std::memory_order_release);
    futexWakeAll(&state_->generation);
    return;
  }
  auto passed = [&] { return state_->generation.load(std::memory_order_acquire) != generation; };
  for (int poll = 0; poll < kBarrierSpinPolls; ++poll) {
    if (passed()) return;
    __builtin_ia32_pause();
  }
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!passed()) {
    futexWaitSlice(&state_->generation, generation, kFutexSleepSliceNs);
    if (passed()) return;
    if (whileWaiting) whileWaiting();
    if (std::chrono::steady_clock::now() > deadline) fail(true, generation, timeout, what);
    for (int r = 0; r < members_; ++r) {
      bool missing = state_->lastArrival[r].load(std::memory_order_relaxed) != generation + 1;
      if (missing && processExited(state_->pids[r])) fail(false, generation, timeout, what);
    }
  }
}

void ShmBarrier::fail(bool timedOut, uint32_t generation, std::chrono::milliseconds timeout,
                      const std::string& what) const {
  std::string missing;
  for (int r = 0; r < members_; ++r) {
    if (state_->lastArrival[r].load(std::memory_order_relaxed) == generation + 1) continue;
    missing += (missing.empty() ? "" : ", ") + std::to_string(r);
    if (processExited(state_->pids[r])) missing += " (exited)";
  }
  if (timedOut) {
    throw TimeoutError(what + " timed out after " + describeDuration(timeout) +
                       " waiting for group ranks " + missing +
                       " (a peer stalled or never arrived; raise --timeout / STRATA_TIMEOUT if "
                       "the work is legitimately slow)");
  }
  throw PeerError(what + " failed (a peer exited): group ranks " + missing +
                  " exited without arriving (shared-memory transport)");
}

}  // namespace strata
