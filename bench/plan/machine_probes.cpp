#include "machine_probes.h"

#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <functional>

#include "bench_stats.h"

namespace strata::bench {
namespace {

using Clock = std::chrono::steady_clock;

// Seconds of each of `repetitions` timed calls of `run`, sorted, after
// `warmup` untimed ones.
std::vector<double> sortedSeconds(const std::function<void()>& run, int warmup, int repetitions) {
  for (int i = 0; i < warmup; ++i) run();
  std::vector<double> times;
  for (int i = 0; i < repetitions; ++i) {
    Clock::time_point start = Clock::now();
    run();
    times.push_back(std::chrono::duration<double>(Clock::now() - start).count());
  }
  std::sort(times.begin(), times.end());
  return times;
}

// The fastest run: on this shared machine, the one least disturbed by other jobs.
double fastestSeconds(const std::function<void()>& run, int warmup, int repetitions) {
  return sortedSeconds(run, warmup, repetitions).front();
}

}  // namespace

double medianSeconds(const std::function<void()>& work, int runs) {
  return median(sortedSeconds(work, 1, runs));
}

double optimizerStepSeconds(const std::vector<at::Tensor>& parameters) {
  std::vector<at::Tensor> copies;
  for (const at::Tensor& p : parameters) {
    copies.push_back(p.detach().clone().requires_grad_(true));
    copies.back().mutable_grad() = torch::randn_like(p) * 1e-3;
  }
  torch::optim::AdamW optimizer(copies, torch::optim::AdamWOptions(1e-4).weight_decay(0.1));
  return median(sortedSeconds(
      [&] {
        torch::nn::utils::clip_grad_norm_(copies, 1.0);
        optimizer.step();
      },
      2, 7));
}

namespace {

// Fewer runs of larger messages: 64 MiB crosses the rehearsal's 1 Gbit/s
// link in half a second.
int warmupRuns(int64_t bytes) { return bytes > (16 << 20) ? 1 : 5; }
int timedRuns(int64_t bytes) { return bytes > (16 << 20) ? 5 : bytes > (1 << 20) ? 15 : 101; }

}  // namespace

double allReduceSeconds(Communicator& group, int64_t bytes) {
  at::Tensor t = torch::ones({bytes / 4});
  group.barrier();
  return fastestSeconds([&] { group.allReduce(t); }, warmupRuns(bytes), timedRuns(bytes));
}

double pointToPointSeconds(Communicator& group, int64_t bytes) {
  at::Tensor t = torch::ones({bytes / 4});
  bool first = group.rank() == 0;
  group.barrier();
  double roundTrip = fastestSeconds(
      [&] {
        if (first) {
          group.send(t, 1);
          group.recv(t, 1);
        } else {
          group.recv(t, 0);
          group.send(t, 0);
        }
      },
      warmupRuns(bytes), timedRuns(bytes));
  return roundTrip / 2;
}

}  // namespace strata::bench
