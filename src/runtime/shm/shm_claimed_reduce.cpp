#include "runtime/shm/shm_claimed_reduce.h"

#include <algorithm>

#include "runtime/shm/shm_futex.h"
#include "runtime/shm/shm_reduce.h"
#include "strata/error.h"
#include "strata/runtime/timeouts.h"

namespace strata {
namespace {

// Small enough that members finishing together split the last of a bucket
// evenly; large enough that taking a piece (one atomic on a shared line)
// costs nothing next to reducing it.
constexpr int64_t kPieceBytes = int64_t{64} << 10;
// A worker waiting for late members spins only briefly: its core is running
// backward, which the spinning would slow down.
constexpr int kHelperSpinPolls = 200;
// A member waiting for its result has nothing else to do; spinning for about
// a millisecond saves the futex wake-up when the last pieces are in flight.
constexpr int kFinishSpinPolls = 20000;

constexpr uint64_t kPieceMask = 0xffffffffu;

}  // namespace

ClaimedAllReduce::ClaimedAllReduce(const ClaimedGroup& group, uint64_t sequence,
                                   std::vector<at::Tensor> regions, ReduceOp op,
                                   const ShmOpDescriptor& mine, std::function<void()> whileWaiting)
    : group_(group),
      slot_(&group.ring->slots[sequence % ClaimedOpRing::kSlots]),
      use_(static_cast<uint32_t>(sequence / ClaimedOpRing::kSlots)),
      regions_(std::move(regions)),
      op_(op),
      whileWaiting_(std::move(whileWaiting)) {
  pieceNumel_ = std::max<int64_t>(1, kPieceBytes / regions_[0].element_size());
  pieces_ = static_cast<uint32_t>((regions_[0].numel() + pieceNumel_ - 1) / pieceNumel_);
  awaitSlot();
  arrive(mine);
}

void ClaimedAllReduce::awaitSlot() {
  waitUntil([this] { return slot_->use.load(std::memory_order_acquire) == use_; }, kFinishSpinPolls,
            [this] {
              return group_.what + ": the collective " + std::to_string(ClaimedOpRing::kSlots) +
                     " ops earlier in this group is still unfinished after " +
                     describeDuration(group_.timeout) +
                     " (a member never waited for its result, or stalled)";
            });
}

// The descriptor is written before the arrival is counted (release), so the
// last member to arrive (acquire) reads every member's.
void ClaimedAllReduce::arrive(const ShmOpDescriptor& mine) {
  slot_->descriptors[group_.rank] = mine;
  slot_->arrivedFor[group_.rank].store(use_ + 1, std::memory_order_relaxed);
  if (slot_->arrived.fetch_add(1, std::memory_order_acq_rel) + 1 ==
      static_cast<uint32_t>(group_.members)) {
    open();
  }
}

void ClaimedAllReduce::open() {
  uint32_t verdict = kOpen;
  try {
    checkMembersAgree(slot_->descriptors, group_.members, group_.what);
  } catch (const ProtocolError&) {
    verdict = kDisagreed;
  }
  slot_->verdict.store(verdict, std::memory_order_release);
  announce();
}

void ClaimedAllReduce::announce() {
  slot_->events.fetch_add(1, std::memory_order_release);
  futexWakeAll(&slot_->events);
}

bool ClaimedAllReduce::claim(uint32_t& piece) {
  uint64_t current = slot_->claims.load(std::memory_order_relaxed);
  while ((current >> 32) == use_ && (current & kPieceMask) < pieces_) {
    if (slot_->claims.compare_exchange_weak(current, current + 1, std::memory_order_acq_rel,
                                            std::memory_order_relaxed)) {
      piece = static_cast<uint32_t>(current & kPieceMask);
      return true;
    }
  }
  return false;
}

void ClaimedAllReduce::reducePiece(uint32_t piece) {
  int64_t start = static_cast<int64_t>(piece) * pieceNumel_;
  int64_t length = std::min(pieceNumel_, regions_[0].numel() - start);
  reduceRangeIntoAll(regions_, start, length, op_);
}

void ClaimedAllReduce::help(bool waitForMembers) {
  auto decided = [this] {
    return slot_->verdict.load(std::memory_order_acquire) != kGathering ||
           slot_->use.load(std::memory_order_acquire) != use_;
  };
  if (waitForMembers) {
    waitUntil(decided, kHelperSpinPolls, [this] {
      return group_.what + " timed out after " + describeDuration(group_.timeout) +
             " waiting for group ranks " + membersNotArrived() +
             " (a peer stalled or never arrived; raise --timeout / STRATA_TIMEOUT if the work is "
             "legitimately slow)";
    });
  }
  // The verdict may already be a later op's when this one is over; claim()
  // then finds the counter's use changed and takes nothing.
  if (slot_->verdict.load(std::memory_order_acquire) != kOpen) return;
  uint32_t piece = 0;
  while (claim(piece)) {
    reducePiece(piece);
    if (slot_->done.fetch_add(1, std::memory_order_acq_rel) + 1 == pieces_) announce();
  }
}

void ClaimedAllReduce::finish() {
  std::lock_guard<std::mutex> lock(finishMutex_);
  if (finished_) {
    if (failure_) std::rethrow_exception(failure_);
    return;
  }
  finished_ = true;
  try {
    finishOnce();
  } catch (...) {
    failure_ = std::current_exception();
    throw;
  }
}

bool ClaimedAllReduce::finished() const {
  std::lock_guard<std::mutex> lock(finishMutex_);
  return finished_;
}

void ClaimedAllReduce::finishOnce() {
  help(true);
  if (slot_->verdict.load(std::memory_order_acquire) == kDisagreed) {
    try {
      checkMembersAgree(slot_->descriptors, group_.members, group_.what);
    } catch (const ProtocolError&) {
      depart();
      throw;
    }
  }
  waitUntil([this] { return slot_->done.load(std::memory_order_acquire) == pieces_; },
            kFinishSpinPolls,
            [this] {
              uint32_t done = slot_->done.load(std::memory_order_relaxed);
              return group_.what + " timed out after " + describeDuration(group_.timeout) + ": " +
                     std::to_string(pieces_ - done) + " of " + std::to_string(pieces_) +
                     " pieces are still unreduced (a member stalled while reducing)";
            });
  depart();
}

// The last member out resets the slot for its next use. Nobody touches this
// op's state or regions any more: every piece is done, and a late helper's
// claim fails on the use number.
void ClaimedAllReduce::depart() {
  if (slot_->departed.fetch_add(1, std::memory_order_acq_rel) + 1 !=
      static_cast<uint32_t>(group_.members)) {
    return;
  }
  slot_->arrived.store(0, std::memory_order_relaxed);
  slot_->verdict.store(kGathering, std::memory_order_relaxed);
  slot_->done.store(0, std::memory_order_relaxed);
  slot_->departed.store(0, std::memory_order_relaxed);
  slot_->claims.store(static_cast<uint64_t>(use_ + 1) << 32, std::memory_order_relaxed);
  slot_->use.store(use_ + 1, std::memory_order_release);
  announce();
}

void ClaimedAllReduce::waitUntil(const std::function<bool()>& ready, int spinPolls,
                                 const std::function<std::string()>& describeStall) {
  for (int poll = 0; poll < spinPolls; ++poll) {
    if (ready()) return;
    __builtin_ia32_pause();
  }
  auto deadline = std::chrono::steady_clock::now() + group_.timeout;
  for (;;) {
    uint32_t seen = slot_->events.load(std::memory_order_acquire);
    if (ready()) return;
    futexWaitSlice(&slot_->events, seen, kFutexSleepSliceNs);
    if (ready()) return;
    if (whileWaiting_) whileWaiting_();
    if (std::chrono::steady_clock::now() > deadline) throw TimeoutError(describeStall());
    // While this op is unfinished every member is still needed: one that
    // exited died in the middle.
    for (int r = 0; r < group_.members; ++r) {
      if (r != group_.rank && processExited(group_.pids[r])) {
        throw PeerError(group_.what + " failed (a peer exited): group rank " + std::to_string(r) +
                        " exited before the op was complete (shared-memory transport)");
      }
    }
  }
}

std::string ClaimedAllReduce::membersNotArrived() const {
  std::string missing;
  for (int r = 0; r < group_.members; ++r) {
    if (slot_->arrivedFor[r].load(std::memory_order_relaxed) == use_ + 1) continue;
    missing += (missing.empty() ? "" : ", ") + std::to_string(r);
    if (processExited(group_.pids[r])) missing += " (exited)";
  }
  return missing;
}

}  // namespace strata
