// An in-place all-reduce over a collective buffer that no member waits to
// start: members announce themselves and go on, and whoever has time reduces
// the tensor piece by piece.
//
// Why not barriers: reducing a gradient bucket during backward runs on each
// member's worker thread, which shares its core with backward. A protocol
// that meets at barriers waits, at every meeting, until the slowest member's
// worker gets its core back; on a machine with one busy thread per core those
// waits cost more than the reduction itself (bench_dp_overhead).
//
// The protocol, for one op:
//   1. arrival (the constructor): a member writes its op descriptor and
//      counts itself in. The last to arrive checks that all descriptors agree
//      and opens the op, or marks it disagreed.
//   2. help(): anyone with time (every member's worker thread, and each
//      member once it waits for the result) takes pieces of kPieceBytes from
//      a shared counter and reduces each over every member's region, in
//      group-rank order, writing the result into every region. The result is
//      the same whoever reduces a piece.
//   3. finish(): helps, waits until every piece is done, and departs; the
//      last member to depart frees the op's slot.
//
// In-flight ops live in a ring of slots in the group's shared header. The
// group's s-th such op (counted by each member; members issue collectives in
// the same order) takes slot s % kSlots for the (s / kSlots)-th time. The
// claim counter carries that use number, so a helper that comes late to a
// slot already reused cannot take a piece of the next op.
#pragma once

#include <ATen/core/Tensor.h>
#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/shm/shm_barrier.h"
#include "runtime/shm/shm_op_descriptor.h"
#include "strata/runtime/communicator.h"

namespace strata {

struct ClaimedOpSlot {
  static constexpr int kMaxMembers = ShmBarrierState::kMaxMembers;
  std::atomic<uint32_t> events;  // futex word: bumped when the op opens, completes or is freed
  std::atomic<uint32_t> use;     // ops this slot has carried to the end
  std::atomic<uint32_t> arrived;
  std::atomic<uint32_t> verdict;  // Verdict
  std::atomic<uint64_t> claims;   // (use << 32) | pieces handed out
  std::atomic<uint32_t> done;     // pieces reduced
  std::atomic<uint32_t> departed;
  std::atomic<uint32_t> arrivedFor[kMaxMembers];  // use + 1 once the member has arrived
  ShmOpDescriptor descriptors[kMaxMembers];
};

struct ClaimedOpRing {
  // Enough for the buckets of a large model to be in flight at once: a
  // member arriving at op s waits for op s - kSlots to be over.
  static constexpr int kSlots = 32;
  ClaimedOpSlot slots[kSlots];  // zeroed by the segment's creator
};

// What every op of one member of one group shares.
struct ClaimedGroup {
  ClaimedOpRing* ring;
  const pid_t* pids;  // by group rank: whose exit to look for while waiting
  int members;
  int rank;
  std::chrono::milliseconds timeout;
  std::string what;  // e.g. "all_reduce on group dp[pp=0] (shared memory)"
};

class ClaimedAllReduce {
 public:
  // Arrives for the group's op `sequence`: regions[j] is member j's copy of
  // the tensor. Blocks only while the op kSlots earlier still holds the slot
  // (TimeoutError / PeerError after the group's timeout). Every wait of this
  // op runs `whileWaiting` between sleeps; it may throw to give up.
  ClaimedAllReduce(const ClaimedGroup& group, uint64_t sequence, std::vector<at::Tensor> regions,
                   ReduceOp op, const ShmOpDescriptor& mine, std::function<void()> whileWaiting);

  // Reduces pieces until none is left to take. With waitForMembers it first
  // blocks until every member has arrived (TimeoutError / PeerError);
  // without, it returns at once while some have not.
  void help(bool waitForMembers);

  // Helps, then blocks until every piece is reduced, and departs. Throws
  // ProtocolError when members disagreed (same message on each), and
  // TimeoutError / PeerError naming the members that stalled or exited. Safe
  // to call from several threads and more than once: later calls return, or
  // rethrow the first call's error.
  void finish();
  bool finished() const;

 private:
  enum Verdict : uint32_t { kGathering = 0, kOpen = 1, kDisagreed = 2 };

  void awaitSlot();
  void arrive(const ShmOpDescriptor& mine);
  void open();
  bool claim(uint32_t& piece);
  void reducePiece(uint32_t piece);
  void finishOnce();
  void depart();
  void announce();
  // Spins `spinPolls` times, then sleeps in slices until ready(); on the
  // deadline or a peer's exit, throws what describeStall() says.
  void waitUntil(const std::function<bool()>& ready, int spinPolls,
                 const std::function<std::string()>& describeStall);
  std::string membersNotArrived() const;

  ClaimedGroup group_;
  ClaimedOpSlot* slot_;
  uint32_t use_;
  std::vector<at::Tensor> regions_;
  ReduceOp op_;
  std::function<void()> whileWaiting_;
  int64_t pieceNumel_;
  uint32_t pieces_;

  mutable std::mutex finishMutex_;
  bool finished_ = false;
  std::exception_ptr failure_;
};

}  // namespace strata
