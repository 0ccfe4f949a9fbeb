// Strata's data parallelism against PyTorch's DistributedDataParallel in
// Python: the same MLP, batch, SGD step, one thread per rank, two ranks, Gloo
// on loopback, launched the same way (one process per rank with the torchrun
// variables). The two run alternately, twice each, in one run; each side's
// best round counts. ratio = pytorch_step_s / strata_step_s (> 1: Strata is
// faster).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_env.h"
#include "bench_ranks.h"
#include "dp_bench_common.h"
#include "strata/runtime/world.h"
#include "strata/util/json.h"
#include "strata/util/openblas_core.h"
#include "strata/util/subprocess.h"

namespace {

using strata::bench::MlpShape;

constexpr int kWarmupSteps = 3;
constexpr int kRounds = 3;
constexpr int kStepsPerRound = 4;
constexpr int kAlternations = 2;
constexpr std::chrono::seconds kRankTimeout{180};

MlpShape shapeNamed(const std::string& name) {
  return name == "small" ? strata::bench::smallMlp() : strata::bench::largeMlp();
}

// In a rank: time Strata's data parallel training; rank 0 writes the result.
void runStrataRank(const std::string& model) {
  using strata::bench::BenchTrainer;
  torch::set_num_threads(1);
  auto world = strata::World::init();
  BenchTrainer trainer(shapeNamed(model), world->comm(), strata::bench::Sync::kOverlapped);
  trainer.secondsPerStep(kWarmupSteps);
  double total = 0;
  for (int round = 0; round < kRounds; ++round) total += trainer.secondsPerStep(kStepsPerRound);
  if (world->rank() == 0) std::ofstream(std::getenv("STRATA_BENCH_RESULT")) << total / kRounds;
}

double readSeconds(const std::string& path) {
  double seconds = 0;
  if (!(std::ifstream(path) >> seconds) || seconds <= 0) {
    throw std::runtime_error("no timing in " + path);
  }
  return seconds;
}

double timeStrata(char* self, const std::string& model, const std::string& resultPath) {
  std::string modelArg = model;
  char* argv[] = {self, modelArg.data(), nullptr};
  strata::bench::spawnRanksIfParent(2, argv, {{"STRATA_BENCH_RESULT", resultPath}});
  return readSeconds(resultPath);
}

double timePytorch(const MlpShape& shape, const std::string& resultPath) {
  int port = strata::bench::freeLoopbackPort();
  std::string widths;
  for (int64_t w : shape.widths) widths += (widths.empty() ? "" : ",") + std::to_string(w);
  std::vector<pid_t> pids;
  for (int rank = 0; rank < 2; ++rank) {
    strata::SpawnSpec spec;
    spec.argv = {strata::bench::peerPython(),
                 strata::bench::sourceDir() + "/scripts/bench_ddp_pytorch.py",
                 "--widths",
                 widths,
                 "--batch",
                 std::to_string(shape.batch),
                 "--warmup",
                 std::to_string(kWarmupSteps),
                 "--rounds",
                 std::to_string(kRounds),
                 "--steps",
                 std::to_string(kStepsPerRound),
                 "--out",
                 resultPath};
    spec.setEnv = {{"RANK", std::to_string(rank)},
                   {"WORLD_SIZE", "2"},
                   {"LOCAL_RANK", std::to_string(rank)},
                   {"LOCAL_WORLD_SIZE", "2"},
                   {"MASTER_ADDR", "127.0.0.1"},
                   {"MASTER_PORT", std::to_string(port)},
                   {"OMP_NUM_THREADS", "1"}};
    pids.push_back(strata::spawnProcess(spec));
  }
  strata::bench::waitForRanks(pids, "PyTorch DDP", kRankTimeout);
  return readSeconds(resultPath);
}

void compare(char* self, const std::string& model) {
  MlpShape shape = shapeNamed(model);
  std::string resultPath = "/tmp/strata_bench_dp_vs_pytorch_" + std::to_string(getpid());
  double strataBest = 1e9, pytorchBest = 1e9;
  for (int i = 0; i < kAlternations; ++i) {
    strataBest = std::min(strataBest, timeStrata(self, model, resultPath));
    pytorchBest = std::min(pytorchBest, timePytorch(shape, resultPath));
  }
  std::remove(resultPath.c_str());
  strata::bench::emitJson({{"bench", "ddp_vs_pytorch"},
                           {"model", shape.name},
                           {"strata_step_s", strata::jsonNumber(strataBest)},
                           {"pytorch_step_s", strata::jsonNumber(pytorchBest)},
                           {"ratio", strata::jsonNumber(pytorchBest / strataBest)}});
}

}  // namespace

int main(int argc, char** argv) {
  // Both sides, and PyTorch's ranks, with the kernels this CPU runs
  // (strata/util/openblas_core.h).
  strata::reexecWithBetterOpenBlasCore(argv);
  if (std::getenv("RANK")) {
    runStrataRank(argc > 1 ? argv[1] : "small");
    return 0;
  }
  compare(argv[0], "small");
  compare(argv[0], "large");
  return 0;
}
