// Waiting on words in memory shared between processes, and telling whether a
// peer process is still there.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>

namespace strata {

// How long a waiter sleeps at most before it checks its deadline and its
// peers again.
constexpr long kFutexSleepSliceNs = 20'000'000;

// Sleeps while *word == expected, for at most `sliceNs`; may return early or
// spuriously, so callers re-check their condition. The word is shared between
// processes, so no private futex.
void futexWaitSlice(std::atomic<uint32_t>* word, uint32_t expected, long sliceNs);

// Wakes every process sleeping on `word`.
void futexWakeAll(std::atomic<uint32_t>* word);

// True when `pid` is gone, or is a zombie its parent has not reaped yet.
bool processExited(pid_t pid);

}  // namespace strata
