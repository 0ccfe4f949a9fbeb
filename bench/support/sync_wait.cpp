#include "sync_wait.h"

#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>

#include "bench_stats.h"
#include "strata/plan/comm.h"

namespace strata::bench {
namespace {

using Clock = std::chrono::steady_clock;

double seconds(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

double idleAllReduceSeconds(Communicator& group, at::Tensor& t) {
  constexpr int kWarmup = 5, kTimed = 101;
  std::vector<double> times;
  group.barrier();
  for (int i = 0; i < kWarmup + kTimed; ++i) {
    Clock::time_point start = Clock::now();
    group.allReduce(t);
    if (i >= kWarmup) times.push_back(seconds(start, Clock::now()));
  }
  return median(times);
}

}  // namespace

double SyncProbe::waitSeconds() const { return std::max(0.0, loadedSeconds - idleSeconds); }

SyncProbe probeSyncWait(Communicator& group, const std::function<void()>& work, int64_t bytes,
                        int runs) {
  at::Tensor t = torch::ones({bytes / 4});
  double idle = idleAllReduceSeconds(group, t);
  group.barrier();
  double workTotal = 0, loadedTotal = 0;
  for (int i = 0; i <= runs; ++i) {
    Clock::time_point start = Clock::now();
    work();
    Clock::time_point computed = Clock::now();
    group.allReduce(t);
    if (i == 0) continue;  // untimed
    workTotal += seconds(start, computed);
    loadedTotal += seconds(computed, Clock::now());
  }
  // The members' means, so that every member reports the same.
  at::Tensor means =
      torch::tensor({float(workTotal / runs), float(loadedTotal / runs), float(idle)});
  group.allReduce(means);
  means /= group.size();
  return {means[0].item<double>(), means[1].item<double>(), means[2].item<double>()};
}

SyncProbe pooled(const std::vector<SyncProbe>& probes) {
  SyncProbe mean;
  for (const SyncProbe& p : probes) {
    mean.workSeconds += p.workSeconds / probes.size();
    mean.loadedSeconds += p.loadedSeconds / probes.size();
    mean.idleSeconds += p.idleSeconds / probes.size();
  }
  return mean;
}

plan::ComputeNoise fitComputeNoise(const SyncProbe& shorter, const SyncProbe& longer,
                                   int groupSize) {
  double t1 = shorter.workSeconds, t2 = longer.workSeconds;
  if (!(t2 > t1 && t1 > 0))
    throw std::invalid_argument("fitComputeNoise: the longer probe's work (" + std::to_string(t2) +
                                " s) must exceed the shorter's (" + std::to_string(t1) + " s)");
  double maximum = plan::expectedMaximumOfNormals(groupSize);
  double sigma1 = shorter.waitSeconds() / maximum, sigma2 = longer.waitSeconds() / maximum;
  // sigma^2 / t = spread^2 t + jitter^2: a line in t through both probes,
  // unless it would need a negative term: then the waits grow more slowly
  // than a random walk's (jitter alone, the probes' mean) or faster than the
  // work (spread alone, through the longer probe).
  double perSecond1 = sigma1 * sigma1 / t1, perSecond2 = sigma2 * sigma2 / t2;
  if (perSecond2 <= perSecond1) return {0, std::sqrt((perSecond1 + perSecond2) / 2)};
  double spreadSquared = (perSecond2 - perSecond1) / (t2 - t1);
  double jitterSquared = perSecond1 - spreadSquared * t1;
  if (jitterSquared < 0) return {sigma2 / t2, 0};
  return {std::sqrt(spreadSquared), std::sqrt(jitterSquared)};
}

}  // namespace strata::bench
