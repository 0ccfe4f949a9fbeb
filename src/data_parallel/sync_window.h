// What DataParallel and FullyShardedDataParallel share about a sync window
// (the micro-batches between two finishGradientSync() calls).
#pragma once

#include <string>
#include <utility>

#include "strata/error.h"

namespace strata::data_parallel {

// finishGradientSync() ends a synchronised backward: throws Error naming
// `group` when gradient sync is off.
inline void requireSyncOn(bool requireSync, const std::string& group) {
  if (requireSync) return;
  throw Error("finishGradientSync() on group " + group +
              " while gradient sync is off; leave noSync() before the last micro-batch");
}

// Calls `reset` when it goes out of scope, so that the next window starts
// clean also when finishing this one throws.
template <class Reset>
class ResetWindowOnExit {
 public:
  explicit ResetWindowOnExit(Reset reset) : reset_(std::move(reset)) {}
  ~ResetWindowOnExit() { reset_(); }
  ResetWindowOnExit(const ResetWindowOnExit&) = delete;
  ResetWindowOnExit& operator=(const ResetWindowOnExit&) = delete;

 private:
  Reset reset_;
};

}  // namespace strata::data_parallel
