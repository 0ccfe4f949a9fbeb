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
  double workSeconds = 0;      // one run of the work: mean over runs and members
  double loadedSeconds = 0;    // the all-reduce right after the work: the same mean
  double idleSeconds = 0;      // the all-reduce back to back: median, mean over members
  double waitSeconds() const;  // loaded - idle, at least 0
};

// Every member of `group` runs `work` and then an all-reduce of `bytes` of
// float32, `runs` times after one untimed run, as tensor parallelism does
// between layers; what that all-reduce takes beyond the same all-reduce back
// to back is the wait for the member behind. Every member must call it and
// gets the same result. Blocks for the runs and about 100 idle all-reduces;
// throws the runtime's TimeoutError / PeerError when a peer fails or falls
// silent.
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
