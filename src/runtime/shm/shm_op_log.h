// Every member's recent shared-memory ops, by their index in the group's
// sequence, so a member left waiting can tell a peer that called something
// else from a peer that is merely late.
//
// The staged ops meet at barriers and the in-place all-reduce meets in its
// own ring (shm_claimed_reduce.h); each checks agreement where its members
// meet. When members call ops of different protocols (one passes a tensor in
// a collective buffer, another an ordinary tensor) they never meet: each
// waits in its own protocol. A waiter therefore looks at the log while it
// waits, and when every member has logged the op it waits in and they differ,
// throws the ProtocolError the meeting would have thrown, with the same text
// on every member.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "runtime/shm/shm_barrier.h"
#include "runtime/shm/shm_op_descriptor.h"

namespace strata {

struct ShmOpLogState {
  static constexpr int kEntries = 32;  // ops a member may run ahead and still be compared
  // index + 1 of the op whose descriptor entry e holds, per member
  std::atomic<uint64_t> logged[ShmBarrierState::kMaxMembers][kEntries];
  ShmOpDescriptor ops[ShmBarrierState::kMaxMembers][kEntries];
};

class ShmOpLog {
 public:
  // `state` is in shared memory, zeroed by its creator.
  ShmOpLog(ShmOpLogState* state, int members, int rank)
      : state_(state), members_(members), rank_(rank) {}

  // Logs this member's next op and returns its index. Callers serialise it;
  // members call it in the same order as their collectives.
  uint64_t append(const ShmOpDescriptor& mine);

  // While waiting in op `index`: throws ProtocolError (via checkMembersAgree)
  // when every member's entry for it is present and they differ. Never
  // blocks; an entry a member has already overwritten counts as absent.
  void checkWhileWaiting(uint64_t index, const std::string& what) const;

 private:
  ShmOpLogState* state_;
  int members_;
  int rank_;
  uint64_t next_ = 0;
};

}  // namespace strata
