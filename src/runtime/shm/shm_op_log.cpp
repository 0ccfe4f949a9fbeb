#include "runtime/shm/shm_op_log.h"

#include <vector>

namespace strata {

// The descriptor is written before its index is published (release), so a
// reader that sees the index (acquire) reads the descriptor whole, unless the
// member has since moved kEntries ops on; the index is read again after the
// copy to rule that out.
uint64_t ShmOpLog::append(const ShmOpDescriptor& mine) {
  uint64_t index = next_++;
  int entry = static_cast<int>(index % ShmOpLogState::kEntries);
  state_->logged[rank_][entry].store(0, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  state_->ops[rank_][entry] = mine;
  state_->logged[rank_][entry].store(index + 1, std::memory_order_release);
  return index;
}

void ShmOpLog::checkWhileWaiting(uint64_t index, const std::string& what) const {
  int entry = static_cast<int>(index % ShmOpLogState::kEntries);
  std::vector<ShmOpDescriptor> ops(members_);
  for (int r = 0; r < members_; ++r) {
    if (state_->logged[r][entry].load(std::memory_order_acquire) != index + 1) return;
    ops[r] = state_->ops[r][entry];
    std::atomic_thread_fence(std::memory_order_acquire);
    if (state_->logged[r][entry].load(std::memory_order_relaxed) != index + 1) return;
  }
  checkMembersAgree(ops.data(), members_, what);
}

}  // namespace strata
