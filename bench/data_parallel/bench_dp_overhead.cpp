// Data-parallel overhead: two processes (one thread each) training with
// gradient all-reduce against the same two processes training with no
// communication at all, measured in the same run, rounds interleaved.
//   overhead_ratio = step_s / nocomm_step_s
#include <cstdio>
#include <string>

#include "bench_ranks.h"
#include "dp_bench_common.h"
#include "strata/runtime/world.h"

namespace {

constexpr int kWarmupSteps = 3;
constexpr int kRounds = 3;
constexpr int kStepsPerRound = 5;

void measure(const strata::bench::MlpShape& shape, strata::Communicator& comm) {
  using strata::bench::BenchTrainer;
  using strata::bench::Sync;
  BenchTrainer parallel(shape, comm, Sync::kOverlapped);
  BenchTrainer local(shape, comm, Sync::kNone);
  parallel.secondsPerStep(kWarmupSteps);
  local.secondsPerStep(kWarmupSteps);
  double parallelTotal = 0, localTotal = 0;
  for (int round = 0; round < kRounds; ++round) {
    parallelTotal += parallel.secondsPerStep(kStepsPerRound);
    localTotal += local.secondsPerStep(kStepsPerRound);
  }
  double step = parallelTotal / kRounds, nocomm = localTotal / kRounds;
  if (comm.rank() != 0) return;
  char json[256];
  std::snprintf(json, sizeof(json),
                "{\"bench\":\"dp_overhead\",\"dp\":%d,\"params\":%lld,\"step_s\":%.5f,"
                "\"nocomm_step_s\":%.5f,\"overhead_ratio\":%.3f}",
                comm.size(), static_cast<long long>(parallel.parameterCount()), step, nocomm,
                step / nocomm);
  strata::bench::emitJson(json);
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
