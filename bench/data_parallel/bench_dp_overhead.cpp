// Data-parallel overhead: two processes (one thread each) training with
// gradient all-reduce against the same two processes training with no
// communication at all, measured in the same run, rounds interleaved.
//   overhead_ratio = median over rounds of (step_s / nocomm_step_s)
// step_s and nocomm_step_s are the medians of each mode's rounds.
#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench_ranks.h"
#include "bench_stats.h"
#include "dp_bench_common.h"
#include "strata/runtime/world.h"
#include "strata/util/json.h"

namespace {

constexpr int kWarmupSteps = 3;
constexpr int kRounds = 15;
// Each round runs about this long per mode, so a round of the small model
// (20 ms steps) is not a handful of steps that one burst of noise decides.
constexpr double kRoundSeconds = 0.3;
constexpr int kMinStepsPerRound = 3;
constexpr int kMaxStepsPerRound = 30;

int stepsPerRound(double secondsPerStep) {
  int steps = static_cast<int>(kRoundSeconds / secondsPerStep);
  return std::clamp(steps, kMinStepsPerRound, kMaxStepsPerRound);
}

void measure(const strata::bench::MlpShape& shape, strata::Communicator& comm) {
  using strata::bench::BenchTrainer;
  using strata::bench::Sync;
  BenchTrainer parallel(shape, comm, Sync::kOverlapped);
  BenchTrainer local(shape, comm, Sync::kNone);
  parallel.secondsPerStep(kWarmupSteps);
  int perRound = stepsPerRound(local.secondsPerStep(kWarmupSteps));
  std::vector<double> steps, nocomms, ratios;
  for (int round = 0; round < kRounds; ++round) {
    steps.push_back(parallel.secondsPerStep(perRound));
    nocomms.push_back(local.secondsPerStep(perRound));
    ratios.push_back(steps.back() / nocomms.back());
  }
  using strata::bench::median;
  if (comm.rank() != 0) return;
  strata::bench::emitJson({{"bench", "dp_overhead"},
                           {"dp", comm.size()},
                           {"params", parallel.parameterCount()},
                           {"step_s", strata::jsonNumber(median(steps))},
                           {"nocomm_step_s", strata::jsonNumber(median(nocomms))},
                           {"overhead_ratio", strata::jsonNumber(median(ratios))}});
}

}  // namespace

int main(int argc, char** argv) {
  if (strata::bench::spawnRanksIfParent(2, argv)) return 0;
  torch::set_num_threads(1);
  auto world = strata::World::init();
  measure(strata::bench::smallMlp(), world->comm());
  measure(strata::bench::largeMlp(), world->comm());
  return 0;
}
