// bench_flight: what the flight recorder costs a training step.
//
// Four ranks train a small GPT at pp 2 x dp 2 (1F1B, 4 micro-batches of 2),
// once with the recorder on (STRATA_FLIGHT_DIR set, as under strata launch)
// and once off, alternating ON OFF OFF ON ... so machine drift cancels; each
// run reports its median step time. Two figures:
//   ratio_on_off        median over pairs of (step_s on / step_s off) - 1,
//                       a direct measure, but within the noise of 4
//                       processes on a shared machine;
//   overhead_estimate   records per step (counted in rank 0's own file) x
//                       the cost of one record (issue + finish, timed in a
//                       loop of a million) / the step time: what the
//                       recorder adds, free of that noise.
#include <torch/torch.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench_ranks.h"
#include "bench_stats.h"
#include "strata/runtime/flight_recorder.h"
#include "strata/train/trainer.h"
#include "strata/util/json.h"

namespace {

using strata::jsonNumber;
using strata::bench::median;
using Clock = std::chrono::steady_clock;

constexpr int kPairs = 3;
constexpr int kWarmupSteps = 2;
constexpr int kTimedSteps = 8;
constexpr int kRecordLoop = 1000000;

strata::train::TrainConfig benchConfig() {
  strata::train::TrainConfig c;
  c.model.layers = 4;
  c.model.hidden = 128;
  c.model.heads = 4;
  c.model.ffn = 512;
  c.model.vocab = 256;
  c.model.context = 64;
  c.train.seqLen = 64;
  c.train.globalBatch = 16;
  c.train.microBatch = 2;
  c.train.steps = 1000;
  c.train.threads = 1;
  c.parallel.pp = 2;
  c.parallel.dp = 2;
  c.data.corpusBytes = 200000;
  return c;
}

// In a rank: trains, and rank 0 writes "<median step s> <records per step>".
void runRank() {
  auto world = strata::World::init();
  strata::train::Trainer trainer(benchConfig(), world);
  for (int i = 0; i < kWarmupSteps; ++i) trainer.step();
  std::string dir = world->env().flightDir;
  auto records = [&] {
    if (dir.empty()) return size_t{0};
    return strata::readFlightRecords(dir).at(0).entries.size();
  };
  size_t before = world->rank() == 0 ? records() : 0;
  std::vector<double> steps;
  for (int i = 0; i < kTimedSteps; ++i) {
    auto start = Clock::now();
    trainer.step();
    steps.push_back(std::chrono::duration<double>(Clock::now() - start).count());
  }
  if (world->rank() != 0) return;
  double perStep = static_cast<double>(records() - before) / kTimedSteps;
  std::ofstream(std::getenv("BENCH_FLIGHT_OUT")) << median(steps) << " " << perStep << "\n";
}

struct Run {
  double stepSeconds = 0;
  double recordsPerStep = 0;
};

Run runJob(char** argv, const std::string& flightDir, const std::string& out) {
  strata::bench::spawnRanksIfParent(4, argv,
                                    {{"STRATA_FLIGHT_DIR", flightDir}, {"BENCH_FLIGHT_OUT", out}});
  Run run;
  std::ifstream(out) >> run.stepSeconds >> run.recordsPerStep;
  return run;
}

// One record's cost: issue() and finish(), as a communicator pays it.
double recordNanoseconds(const std::string& dir) {
  auto recorder = strata::FlightRecorder::open(dir + "/loop", 0, 1);
  std::string group = "dp[pp=0]";
  auto start = Clock::now();
  for (int i = 0; i < kRecordLoop; ++i) {
    strata::FlightRecord* r =
        recorder->issue(group, 0, 2, i + 1, strata::FlightOp::kAllReduce, 1024, 6, -1);
    strata::FlightRecorder::finish(r, strata::FlightState::kCompleted);
  }
  return std::chrono::duration<double, std::nano>(Clock::now() - start).count() / kRecordLoop;
}

}  // namespace

int main(int, char** argv) {
  if (std::getenv("RANK")) {
    torch::set_num_threads(1);
    runRank();
    return 0;
  }
  std::string dir =
      (std::filesystem::temp_directory_path() / ("strata_bench_flight_" + std::to_string(getpid())))
          .string();
  std::filesystem::create_directories(dir);
  std::string out = dir + "/result";
  std::vector<double> on, off, ratios, records;
  for (int pair = 0; pair < kPairs; ++pair) {
    bool onFirst = pair % 2 == 0;
    Run first = runJob(argv, onFirst ? dir + "/records" : "", out);
    Run second = runJob(argv, onFirst ? "" : dir + "/records", out);
    const Run& withRecorder = onFirst ? first : second;
    const Run& without = onFirst ? second : first;
    on.push_back(withRecorder.stepSeconds);
    off.push_back(without.stepSeconds);
    ratios.push_back(withRecorder.stepSeconds / without.stepSeconds - 1);
    records.push_back(withRecorder.recordsPerStep);
    std::cerr << "bench_flight: pair " << pair + 1 << " of " << kPairs << ": on "
              << withRecorder.stepSeconds << " s, off " << without.stepSeconds << " s, "
              << withRecorder.recordsPerStep << " records a step on rank 0" << std::endl;
  }
  double ns = recordNanoseconds(dir);
  double stepOff = median(off);
  strata::bench::emitJson(
      {{"bench", "flight_recorder"},
       {"layout", "pp 2 x dp 2"},
       {"step_s_on", jsonNumber(median(on))},
       {"step_s_off", jsonNumber(stepOff)},
       {"ratio_on_off", jsonNumber(median(ratios))},
       {"records_per_step", jsonNumber(median(records))},
       {"record_ns", jsonNumber(ns)},
       {"overhead_estimate", jsonNumber(median(records) * ns * 1e-9 / stepOff)}});
  std::filesystem::remove_all(dir);
  return 0;
}
