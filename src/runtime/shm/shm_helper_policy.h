// Whether a member's worker thread reduces pieces of an in-place all-reduce
// while the member computes (shm_claimed_reduce.h), or leaves them to the
// members' waiting threads.
//
// The reduction is CPU work. With a core to spare the worker hides it behind
// backward. Without one it only takes turns with backward on a busy core, and
// the switching and the evicted caches made steps slower than leaving all of
// it to the end (bench_dp_overlap on two cores with two one-thread ranks).
// So by default the worker helps only when the host has more hardware threads
// than its training processes use (processes on the host x intra-op threads).
// STRATA_SHM_HELPER=always|never|auto overrides.
#pragma once

namespace strata {

enum class ShmHelperPolicy { kAuto, kAlways, kNever };

// Reads STRATA_SHM_HELPER (unset: kAuto); ConfigError names a bad value.
ShmHelperPolicy shmHelperPolicyFromEnvironment();

// Decided per op: the intra-op thread count may change during a job.
bool workerShouldHelp(ShmHelperPolicy policy, int processesOnHost);

}  // namespace strata
