#include "sync_wait.h"

#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>

#include "strata/plan/comm.h"

namespace strata::bench {
namespace {

using Clock = std::chrono::steady_clock;

double secondsSinceBoot(Clock::time_point t) {
  return std::chrono::duration<double>(t.time_since_epoch()).count();
}

}  // namespace

SyncProbe probeSyncWait(Communicator& group, const std::function<void()>& work, int64_t bytes,
                        int runs) {
  at::Tensor t = torch::ones({bytes / 4});
  // times[0 arrival / 1 return][member][run]: each member fills its rows,
  // the sum gathers them.
  at::Tensor times = torch::zeros({2, group.size(), runs}, torch::kFloat64);
  double* arrived = times[0][group.rank()].data_ptr<double>();
  double* returned = times[1][group.rank()].data_ptr<double>();
  double workTotal = 0;
  group.barrier();
  for (int i = 0; i <= runs; ++i) {
    Clock::time_point start = Clock::now();
    work();
    Clock::time_point computed = Clock::now();
    group.allReduce(t);
    Clock::time_point done = Clock::now();
    if (i == 0) continue;  // untimed
    workTotal += std::chrono::duration<double>(computed - start).count();
    arrived[i - 1] = secondsSinceBoot(computed);
    returned[i - 1] = secondsSinceBoot(done);
  }
  group.allReduce(times);
  at::Tensor last = std::get<0>(times[0].max(0)).unsqueeze(0);  // [1, runs]
  double wait = (last - times[0]).mean().item<double>();
  double transfer = (times[1] - last).mean().item<double>();
  at::Tensor meanWork = torch::tensor({workTotal / runs}, torch::kFloat64);
  group.allReduce(meanWork);
  return {meanWork.item<double>() / group.size(), wait, transfer};
}

SyncProbe pooled(const std::vector<SyncProbe>& probes) {
  SyncProbe mean;
  for (const SyncProbe& p : probes) {
    mean.workSeconds += p.workSeconds / probes.size();
    mean.waitSeconds += p.waitSeconds / probes.size();
    mean.transferSeconds += p.transferSeconds / probes.size();
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
  double sigma1 = shorter.waitSeconds / maximum, sigma2 = longer.waitSeconds / maximum;
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
