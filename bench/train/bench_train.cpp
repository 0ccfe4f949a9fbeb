// bench_train: the GPT trainer's three benchmarks, in one run on one thread.
//
//   train_overhead    Trainer::step (pp = dp = tp = 1, one micro-batch)
//                     against PlainGptLoop, the same GPT, data and AdamW in
//                     a hand-written LibTorch loop. Rounds alternate
//                     A B B A ... so machine drift cancels; overhead =
//                     median over rounds of (trainer / plain) - 1, from wall
//                     time, and overhead_cpu the same from process CPU time
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
#include "strata/train/loop/flops.h"
#include "strata/train/loop/peak_flops.h"
#include "strata/train/loop/trainer.h"
#include "strata/util/json.h"
#include "strata/util/openblas_core.h"
#include "strata/util/subprocess.h"

namespace {
using strata::jsonNumber;
using strata::bench::median;

using strata::train::TrainConfig;

constexpr int kOverheadRounds = 48;
constexpr int kOverheadStepsPerRound = 4;
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

nlohmann::ordered_json benchOverhead() {
  TrainConfig config = overheadConfig();
  auto world = strata::bench::singleProcessWorld();
  strata::train::Trainer trainer(config, world);
  strata::bench::PlainGptLoop plain(config, world->worldComm());
  auto strataStep = [&] { return trainer.step().loss; };
  auto plainStep = [&] { return plain.step(); };
  std::vector<double> strataLosses, plainLosses, strataTimes, plainTimes, ratios, cpuRatios;
  timeSteps(strataStep, 2, strataLosses);  // warm-up: allocator, kernels
  timeSteps(plainStep, 2, plainLosses);
  for (int round = 0; round < kOverheadRounds; ++round) {
    StepTimes s, p;
    if (round % 2 == 0) {
      s = timeSteps(strataStep, kOverheadStepsPerRound, strataLosses);
      p = timeSteps(plainStep, kOverheadStepsPerRound, plainLosses);
    } else {
      p = timeSteps(plainStep, kOverheadStepsPerRound, plainLosses);
      s = timeSteps(strataStep, kOverheadStepsPerRound, strataLosses);
    }
    strataTimes.push_back(s.wall);
    plainTimes.push_back(p.wall);
    ratios.push_back(s.wall / p.wall);
    cpuRatios.push_back(s.cpu / p.cpu);
  }
  return {{"bench", "train_overhead"},
          {"overhead", jsonNumber(median(ratios) - 1.0)},
          {"overhead_cpu", jsonNumber(median(cpuRatios) - 1.0)},
          {"strata_step_s", jsonNumber(median(strataTimes))},
          {"plain_step_s", jsonNumber(median(plainTimes))},
          {"rounds", kOverheadRounds},
          {"steps_per_round", kOverheadStepsPerRound},
          {"max_loss_diff", jsonNumber(maxAbsDifference(strataLosses, plainLosses))},
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
  std::cerr << "bench_train: trainer overhead against a plain LibTorch loop\n";
  strata::bench::emitJson(benchOverhead());
  std::cerr << "bench_train: MFU and Python PyTorch, hidden 512\n";
  TrainConfig large = largeConfig();
  LargeTimings timings = timeLarge(large);
  strata::bench::emitJson(mfuJson(large, timings));
  strata::bench::emitJson(versusPytorchJson(large, timings));
  return 0;
}
