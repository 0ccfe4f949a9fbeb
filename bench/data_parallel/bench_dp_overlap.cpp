// How much of the gradient all-reduce hides behind backward. Three modes in
// one run, rounds interleaved, on the ~17M-parameter MLP with two ranks:
//   T_none       local training, no communication
//   T_after      the same bucket all-reduces, started only after backward
//   T_overlapped all-reduces started as buckets complete during backward
// Serialised communication costs T_after - T_none; overlap saves
// T_after - T_overlapped of it:
//   hidden_fraction = (T_after - T_overlapped) / (T_after - T_none)
// with each T the median of its mode's rounds. The three times are printed
// too: when T_after - T_none is within the noise the fraction means little.

#include <nlohmann/json.hpp>

#include "bench_ranks.h"
#include "bench_stats.h"
#include "dp_bench_common.h"
#include "strata/runtime/world.h"
#include "strata/util/json.h"

namespace {

constexpr int kWarmupSteps = 3;
constexpr int kRounds = 7;
constexpr int kStepsPerRound = 3;

}  // namespace

int main(int argc, char** argv) {
  using strata::bench::BenchTrainer;
  using strata::bench::Sync;
  if (strata::bench::spawnRanksIfParent(2, argv)) return 0;
  torch::set_num_threads(1);
  auto world = strata::World::init();
  strata::Communicator& comm = world->comm();
  auto shape = strata::bench::largeMlp();
  BenchTrainer overlapped(shape, comm, Sync::kOverlapped);
  BenchTrainer after(shape, comm, Sync::kAfterBackward);
  BenchTrainer none(shape, comm, Sync::kNone);
  for (BenchTrainer* t : {&overlapped, &after, &none}) t->secondsPerStep(kWarmupSteps);
  std::vector<double> overlappedTimes, afterTimes, noneTimes;
  for (int round = 0; round < kRounds; ++round) {
    overlappedTimes.push_back(overlapped.secondsPerStep(kStepsPerRound));
    afterTimes.push_back(after.secondsPerStep(kStepsPerRound));
    noneTimes.push_back(none.secondsPerStep(kStepsPerRound));
  }
  using strata::bench::median;
  double tOverlapped = median(overlappedTimes), tAfter = median(afterTimes),
         tNone = median(noneTimes);
  if (comm.rank() == 0) {
    strata::bench::emitJson(
        {{"bench", "dp_overlap"},
         {"overlapped_step_s", strata::jsonNumber(tOverlapped)},
         {"after_backward_step_s", strata::jsonNumber(tAfter)},
         {"nocomm_step_s", strata::jsonNumber(tNone)},
         {"hidden_fraction", strata::jsonNumber((tAfter - tOverlapped) / (tAfter - tNone))}});
  }
  return 0;
}
