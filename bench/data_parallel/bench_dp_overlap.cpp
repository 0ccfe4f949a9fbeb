// How much of the gradient all-reduce hides behind backward. Three modes in
// one run, rounds interleaved, on the ~17M-parameter MLP with two ranks:
//   T_none       local training, no communication
//   T_after      the same bucket all-reduces, started only after backward
//   T_overlapped all-reduces started as buckets complete during backward
// Serialised communication costs T_after - T_none; overlap saves
// T_after - T_overlapped of it:
//   hidden_fraction = (T_after - T_overlapped) / (T_after - T_none)
#include <cstdio>

#include "bench_ranks.h"
#include "dp_bench_common.h"
#include "strata/runtime/world.h"

namespace {

constexpr int kWarmupSteps = 3;
constexpr int kRounds = 3;
constexpr int kStepsPerRound = 4;

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
  double tOverlapped = 0, tAfter = 0, tNone = 0;
  for (int round = 0; round < kRounds; ++round) {
    tOverlapped += overlapped.secondsPerStep(kStepsPerRound);
    tAfter += after.secondsPerStep(kStepsPerRound);
    tNone += none.secondsPerStep(kStepsPerRound);
  }
  if (comm.rank() == 0) {
    std::fprintf(stderr, "dp_overlap: overlapped %.4f s, after backward %.4f s, no comm %.4f s\n",
                 tOverlapped / kRounds, tAfter / kRounds, tNone / kRounds);
    char json[128];
    std::snprintf(json, sizeof(json), "{\"bench\":\"dp_overlap\",\"hidden_fraction\":%.3f}",
                  (tAfter - tOverlapped) / (tAfter - tNone));
    strata::bench::emitJson(json);
  }
  return 0;
}
