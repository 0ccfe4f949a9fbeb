// The wait of a collective for its slowest member, measured, and the
// planner's ComputeNoise (plan/cluster.h) fitted to it.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "strata/plan/cluster.h"
#include "strata/runtime/communicator.h"

namespace strata::bench {

struct SyncProbe {
  double workSeconds = 0;  // one run of the work: mean over runs and members
  double waitSeconds = 0;  // the last member's arrival after a member's own: the same mean
  // From the last arrival to the member's return: the all-reduce's own time
  // right after compute (its buffers no longer in cache), the same mean.
  double transferSeconds = 0;
};

// Every member of `group` runs `work` and then an all-reduce of `bytes` of
// float32, `runs` times after one untimed run, as tensor parallelism does
// between layers. Each member notes when it arrives at the all-reduce and
// when it returns; the last arrival minus a member's own is its wait, its
// return minus the last arrival the transfer. The members must share one
// clock (run on one host: steady_clock is the machine's). Every member must
// call it and gets the same result. Blocks for the runs; throws the runtime's
// TimeoutError / PeerError when a peer fails or falls silent.
SyncProbe probeSyncWait(Communicator& group, const std::function<void()>& work, int64_t bytes,
                        int runs);

// The probes' means (rounds of the same probe taken together).
SyncProbe pooled(const std::vector<SyncProbe>& probes);

// The noise whose deviation (plan/comm.h: wait = sigma(t) x E[max of
// `groupSize` normals]) gives both probes' waits: sigma^2 = (spread t)^2 +
// jitter^2 t through the two points when both terms come out at least 0;
// otherwise the one term that fits best. Throws std::invalid_argument unless
// `longer` took longer than `shorter`.
plan::ComputeNoise fitComputeNoise(const SyncProbe& shorter, const SyncProbe& longer,
                                   int groupSize);

}  // namespace strata::bench
