// bench_train: the GPT trainer's three benchmarks, in one run on one thread.
//
//   train_overhead    Trainer::step (pp = dp = tp = 1, one micro-batch)
//                     against PlainGptLoop, the same GPT, data and AdamW in
//                     a hand-written LibTorch loop. Each side lives in a
//                     child process of its own (this program, started with
//                     --overhead-side), as a user's loop does: two loops in
//                     one process weigh on each other through the heap and
//                     the caches, whichever runs second reading slower.
//                     Rounds of one step alternate between the two
//                     children A B B A ... (round_process.h) so the host's
//                     drift cancels; overhead = median over rounds of
//                     (trainer / plain) - 1, from wall time, and
//                     overhead_cpu the same from each child's CPU time
//                     (steadier where other processes share the cores).
//   train_mfu         model FLOP/s of a training step (flops.h) over this
//                     machine's single-thread matrix-product peak, measured
//                     in this run next to each timing round.
//   train_vs_pytorch  the same step in Python PyTorch
//                     (scripts/bench_train_pytorch.py), run between the C++
//                     rounds; ratio = pytorch / strata step time.
//
// Each side's best round counts where only a few rounds fit (a shared,
// noisy machine slows a round, never speeds it up). The loss of every
// trainer step is compared with the plain loop's: the two must do the same
// arithmetic, or the overhead would measure something else.
#include <torch/torch.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_env.h"
#include "bench_ranks.h"
#include "bench_stats.h"
#include "plain_gpt_loop.h"
#include "pytorch_peer.h"
#include "round_process.h"
#include "strata/report/flops.h"
#include "strata/report/peak_flops.h"
#include "strata/train/trainer.h"
#include "strata/util/json.h"
#include "strata/util/openblas_core.h"
#include "strata/util/subprocess.h"

namespace {
using strata::jsonNumber;
using strata::bench::median;

using strata::train::TrainConfig;

constexpr int kOverheadRounds = 192;
constexpr int kOverheadStepsPerRound = 1;
constexpr int kOverheadWarmupSteps = 3;
constexpr std::chrono::seconds kSideTimeout{300};  // a side's start-up and warm-up included
constexpr int kLargeAlternations = 5;
constexpr int kLargeStepsPerRound = 3;
constexpr int kPeakSize = 1024;
constexpr int kPeakRepeats = 5;

// One process, one thread, one micro-batch (global batch = micro-batch) and a
// constant learning rate (no warmup, floor = peak), so the trainer and the
// plain loop step identically.
TrainConfig benchConfig(const strata::train::ModelConfig& model) {
  TrainConfig c;
  c.model = model;
  c.model.tiedEmbeddings = false;
  c.train.globalBatch = 8;
  c.train.microBatch = 8;
  c.train.seqLen = 128;
  c.train.steps = 1000;
  c.train.warmupSteps = 0;
  c.train.minLr = c.train.lr;
  c.train.threads = 1;
  c.data.corpusBytes = 300000;  // ~2300 windows: no epoch ends during the bench
  return c;
}

// The trainer's default GPT: small, so any fixed cost per step shows.
TrainConfig overheadConfig() { return benchConfig(strata::train::ModelConfig{}); }

TrainConfig largeConfig() {
  strata::train::ModelConfig m;
  m.layers = 4;
  m.hidden = 512;
  m.heads = 8;
  m.ffn = 2048;
  return benchConfig(m);
}

struct StepTimes {
  double wall = 0;  // seconds per step
  double cpu = 0;   // process CPU seconds per step: every thread, but not the
                    // time other processes on a shared machine take from us
};

double processCpuSeconds() {
  timespec now{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
}

// Runs `steps` steps, appending each loss; returns the mean times per step.
StepTimes timeSteps(const std::function<double()>& step, int steps, std::vector<double>& losses) {
  double cpuStart = processCpuSeconds();
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < steps; ++i) losses.push_back(step());
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return {wall / steps, (processCpuSeconds() - cpuStart) / steps};
}

double maxAbsDifference(const std::vector<double>& a, const std::vector<double>& b) {
  double worst = 0;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i)
    worst = std::max(worst, std::abs(a[i] - b[i]));
  return worst;
}

// The numbers a side's round answers: wall and CPU seconds per step, then
// each step's loss.
std::vector<double> roundNumbers(const StepTimes& times, const std::vector<double>& losses) {
  std::vector<double> numbers{times.wall, times.cpu};
  numbers.insert(numbers.end(), losses.begin(), losses.end());
  return numbers;
}

// The child's part: build one side, warm it up, then run a round of steps
// each time the parent asks.
void serveOverheadSide(const std::string& side, int channel) {
  TrainConfig config = overheadConfig();
  auto world = strata::bench::singleProcessWorld();
  std::function<double()> step;
  std::unique_ptr<strata::train::Trainer> trainer;
  std::unique_ptr<strata::bench::PlainGptLoop> plain;
  if (side == "trainer") {
    trainer = std::make_unique<strata::train::Trainer>(config, world);
    step = [&] { return trainer->step().loss; };
  } else if (side == "plain") {
    plain = std::make_unique<strata::bench::PlainGptLoop>(config, world->worldComm());
    step = [&] { return plain->step(); };
  } else {
    throw std::invalid_argument("bench_train: --overhead-side is 'trainer' or 'plain', not '" +
                                side + "'");
  }
  std::vector<double> warmupLosses;
  timeSteps(step, kOverheadWarmupSteps, warmupLosses);  // allocator, kernels
  strata::bench::serveRounds(channel, [&] {
    std::vector<double> losses;
    StepTimes times = timeSteps(step, kOverheadStepsPerRound, losses);
    return roundNumbers(times, losses);
  });
}

struct SideRound {
  StepTimes times;
  std::vector<double> losses;
};

SideRound runRound(strata::bench::RoundProcess& side) {
  std::vector<double> numbers = side.round();
  if (numbers.size() != 2 + kOverheadStepsPerRound)
    throw std::runtime_error("bench_train: a side answered " + std::to_string(numbers.size()) +
                             " numbers for a round");
  return {{numbers[0], numbers[1]}, {numbers.begin() + 2, numbers.end()}};
}

strata::bench::RoundProcess startSide(const std::string& side) {
  return strata::bench::RoundProcess(side, {strata::currentExecutable(), "--overhead-side", side},
                                     kSideTimeout);
}

nlohmann::ordered_json benchOverhead() {
  TrainConfig config = overheadConfig();
  strata::bench::RoundProcess trainerSide = startSide("trainer");
  strata::bench::RoundProcess plainSide = startSide("plain");
  std::vector<double> strataTimes, plainTimes, ratios, cpuRatios;
  double lossDiff = 0;
  for (int round = 0; round < kOverheadRounds; ++round) {
    SideRound s, p;
    if (round % 2 == 0) {
      s = runRound(trainerSide);
      p = runRound(plainSide);
    } else {
      p = runRound(plainSide);
      s = runRound(trainerSide);
    }
    strataTimes.push_back(s.times.wall);
    plainTimes.push_back(p.times.wall);
    ratios.push_back(s.times.wall / p.times.wall);
    cpuRatios.push_back(s.times.cpu / p.times.cpu);
    lossDiff = std::max(lossDiff, maxAbsDifference(s.losses, p.losses));
  }
  return {{"bench", "train_overhead"},
          {"overhead", jsonNumber(median(ratios) - 1.0)},
          {"overhead_cpu", jsonNumber(median(cpuRatios) - 1.0)},
          {"strata_step_s", jsonNumber(median(strataTimes))},
          {"plain_step_s", jsonNumber(median(plainTimes))},
          {"rounds", kOverheadRounds},
          {"steps_per_round", kOverheadStepsPerRound},
          {"max_loss_diff", jsonNumber(lossDiff)},
          {"layers", config.model.layers},
          {"hidden", config.model.hidden},
          {"batch", config.train.globalBatch},
          {"seq", config.train.seqLen}};
}

struct LargeTimings {
  double strataStep = 1e30;   // best round, seconds per step
  double pytorchStep = 1e30;  // best round, seconds per step
  double peakFlops = 0;       // best single-thread matmul FLOP/s
};

// C++ round, peak, Python round, repeated: every measurement sees the same
// stretch of the machine's load.
LargeTimings timeLarge(const TrainConfig& config) {
  auto world = strata::bench::singleProcessWorld();
  strata::train::Trainer trainer(config, world);
  auto strataStep = [&] { return trainer.step().loss; };
  std::vector<double> losses;
  timeSteps(strataStep, 1, losses);
  LargeTimings t;
  for (int round = 0; round < kLargeAlternations; ++round) {
    t.strataStep = std::min(t.strataStep, timeSteps(strataStep, kLargeStepsPerRound, losses).wall);
    t.peakFlops =
        std::max(t.peakFlops, strata::train::measureMatmulFlops(kPeakSize, kPeakRepeats, 1));
    strata::bench::PytorchTiming py =
        strata::bench::timePytorchStep(config, 1, kLargeStepsPerRound);
    t.pytorchStep = std::min(t.pytorchStep, py.stepSeconds);
    std::cerr << "bench_train: round " << round << ": strata loss " << losses.back()
              << ", pytorch loss " << py.lastLoss << "\n";
  }
  return t;
}

nlohmann::ordered_json mfuJson(const TrainConfig& config, const LargeTimings& t) {
  const auto& m = config.model;
  strata::train::GptShape shape{m.layers, m.hidden, m.ffn, m.vocab, config.train.seqLen};
  double flopsPerToken = strata::train::gptTrainingFlopsPerToken(shape);
  double tokensPerSecond =
      static_cast<double>(config.train.globalBatch * config.train.seqLen) / t.strataStep;
  double mfu = strata::train::modelFlopsUtilization(flopsPerToken, tokensPerSecond, t.peakFlops, 1);
  return {{"bench", "train_mfu"},
          {"hidden", m.hidden},
          {"mfu", jsonNumber(mfu)},
          {"achieved_gflops", jsonNumber(flopsPerToken * tokensPerSecond / 1e9)},
          {"peak_gflops", jsonNumber(t.peakFlops / 1e9)},
          {"step_s", jsonNumber(t.strataStep)},
          {"tokens_per_s", jsonNumber(tokensPerSecond)},
          {"layers", m.layers},
          {"ffn", m.ffn},
          {"batch", config.train.globalBatch},
          {"seq", config.train.seqLen}};
}

nlohmann::ordered_json versusPytorchJson(const TrainConfig& config, const LargeTimings& t) {
  return {{"bench", "train_vs_pytorch"},
          {"ratio", jsonNumber(t.pytorchStep / t.strataStep)},
          {"strata_step_s", jsonNumber(t.strataStep)},
          {"pytorch_step_s", jsonNumber(t.pytorchStep)},
          {"hidden", config.model.hidden}};
}

// OpenBLAS (libopenblas0-pthread) sizes its own thread pool from the
// environment when it loads, and torch::set_num_threads does not reach it:
// without these variables a "one thread" run multiplies matrices on every
// core. Its kernels too are chosen then (strata/util/openblas_core.h): the
// PyTorch peer, the plain loop and the peak all multiply through it. So the
// benchmark re-executes itself once with them set.
void reexecWithOneBlasThread(char** argv) {
  std::optional<std::string> core = strata::openBlasCoreToForce();
  const char* blas = std::getenv("OPENBLAS_NUM_THREADS");
  if (blas && std::string(blas) == "1" && !core) return;
  if (core) setenv("OPENBLAS_CORETYPE", core->c_str(), 1);
  setenv("OPENBLAS_NUM_THREADS", "1", 1);
  setenv("OMP_NUM_THREADS", "1", 1);
  std::string self = strata::currentExecutable();
  execv(self.c_str(), argv);
  throw std::runtime_error("bench_train: cannot re-execute " + self);
}

}  // namespace

int main(int argc, char** argv) {
  reexecWithOneBlasThread(argv);
  torch::set_num_threads(1);
  if (argc > 1) {
    std::vector<std::string> args(argv + 1, argv + argc);
    if (args.size() != 4 || args[0] != "--overhead-side" || args[2] != "--channel") {
      std::cerr << "bench_train takes no arguments (--overhead-side trainer|plain --channel FD "
                   "start its own children)\n";
      return 2;
    }
    serveOverheadSide(args[1], std::stoi(args[3]));
    return 0;
  }
  std::cerr << "bench_train: trainer overhead against a plain LibTorch loop\n";
  strata::bench::emitJson(benchOverhead());
  std::cerr << "bench_train: MFU and Python PyTorch, hidden 512\n";
  TrainConfig large = largeConfig();
  LargeTimings timings = timeLarge(large);
  strata::bench::emitJson(mfuJson(large, timings));
  strata::bench::emitJson(versusPytorchJson(large, timings));
  return 0;
}
