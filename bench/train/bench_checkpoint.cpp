// bench_checkpoint: what a checkpoint costs the training it interrupts.
//
// One process, one intra-op thread, a GPT of about 13M parameters (its
// checkpoint: weights and AdamW's two moments, about 150 MB). Rounds
// alternate plain steps, a synchronous save and an asynchronous one, so
// machine drift touches all three alike; medians over the rounds.
//
//   sync   step_s_during_save = the step that saves, save included
//   async  step_s_during_save = the mean step (poll, and at the first the
//          snapshot, included) while the background write runs; save_s from
//          start to completion; snapshot_s what start() took
//
// ratio = step_s_during_save / step_s_plain; goal for async: <= 1.15. The
// background thread has the second core to itself, as a 2-core machine
// training one process per core does not: the figure is for one process.
// resume_s: a fresh Trainer restoring the latest checkpoint.
#include <torch/torch.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench_env.h"
#include "bench_stats.h"
#include "strata/checkpoint/async_checkpoint.h"
#include "strata/train/trainer.h"

namespace {

using Clock = std::chrono::steady_clock;
using strata::bench::median;
using strata::train::AsyncCheckpoint;
using strata::train::TrainConfig;
using strata::train::Trainer;

constexpr int kRounds = 3;
constexpr int kPlainStepsPerRound = 4;
constexpr double kAsyncGoal = 1.15;

double since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

TrainConfig benchConfig(const std::string& dir) {
  TrainConfig c;
  c.model.layers = 4;
  c.model.hidden = 512;
  c.model.heads = 8;
  c.model.ffn = 2048;
  c.model.tiedEmbeddings = false;
  c.train.globalBatch = 8;
  c.train.microBatch = 4;
  c.train.seqLen = 128;
  c.train.steps = 1000;
  c.train.threads = 1;
  c.data.corpusBytes = 300000;
  c.checkpoint.dir = dir;
  return c;
}

uintmax_t bytesUnder(const std::filesystem::path& dir) {
  uintmax_t total = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir))
    if (entry.is_regular_file()) total += entry.file_size();
  return total;
}

struct Timings {
  std::vector<double> plain, syncStep, syncSave, asyncStep, asyncSave, snapshot, stepsDuring;
};

void plainRound(Trainer& trainer, Timings& t) {
  for (int i = 0; i < kPlainStepsPerRound; ++i) {
    auto start = Clock::now();
    trainer.step();
    t.plain.push_back(since(start));
  }
}

void syncRound(Trainer& trainer, Timings& t) {
  auto start = Clock::now();
  trainer.step();
  auto saveStart = Clock::now();
  trainer.saveCheckpoint();
  t.syncSave.push_back(since(saveStart));
  t.syncStep.push_back(since(start));
}

// Steps until the background save completes: each step with its poll, the
// first also with the snapshot.
void asyncRound(Trainer& trainer, Timings& t) {
  AsyncCheckpoint saver;
  strata::Communicator& comm = trainer.world().comm();
  auto start = Clock::now();
  trainer.step();
  auto saveStart = Clock::now();
  trainer.startCheckpoint(saver);
  t.snapshot.push_back(since(saveStart));
  double stepsSeconds = since(start);
  int steps = 1;
  for (;;) {
    auto stepStart = Clock::now();
    trainer.step();
    bool done = saver.poll(comm).has_value();
    stepsSeconds += since(stepStart);
    ++steps;
    if (done) break;
  }
  t.asyncSave.push_back(since(saveStart));
  t.asyncStep.push_back(stepsSeconds / steps);
  t.stepsDuring.push_back(steps);
}

double resumeSeconds(const TrainConfig& config, const std::shared_ptr<strata::World>& world) {
  Trainer fresh(config, world);
  auto restoreStart = Clock::now();
  if (!fresh.resumeFromLatest()) throw std::runtime_error("bench_checkpoint: nothing to resume");
  return since(restoreStart);
}

}  // namespace

int main() {
  std::string dir = (std::filesystem::temp_directory_path() /
                     ("strata-bench-checkpoint-" + std::to_string(getpid())))
                        .string();
  TrainConfig config = benchConfig(dir);
  auto world = strata::bench::singleProcessWorld();
  Trainer trainer(config, world);
  int64_t modelBytes = trainer.parameterCount() * 4;
  std::cerr << "bench_checkpoint: GPT of " << trainer.parameterCount() << " parameters, " << kRounds
            << " rounds of plain steps, a sync save and an async save" << std::endl;
  trainer.step();  // warm-up: allocator, kernels
  Timings t;
  for (int round = 0; round < kRounds; ++round) {
    plainRound(trainer, t);
    syncRound(trainer, t);
    asyncRound(trainer, t);
    std::cerr << "bench_checkpoint: round " << round + 1 << " of " << kRounds << " done"
              << std::endl;
  }
  uintmax_t checkpointBytes =
      bytesUnder(strata::train::stepDirectory(dir, trainer.stepsDone() - t.stepsDuring.back()));
  double resume = resumeSeconds(config, world);
  double plain = median(t.plain);
  nlohmann::ordered_json sync = {{"bench", "checkpoint"},
                                 {"mode", "sync"},
                                 {"model_bytes", modelBytes},
                                 {"checkpoint_bytes", checkpointBytes},
                                 {"step_s_plain", plain},
                                 {"step_s_during_save", median(t.syncStep)},
                                 {"ratio", median(t.syncStep) / plain},
                                 {"save_s", median(t.syncSave)},
                                 {"resume_s", resume}};
  nlohmann::ordered_json async = {{"bench", "checkpoint"},
                                  {"mode", "async"},
                                  {"model_bytes", modelBytes},
                                  {"checkpoint_bytes", checkpointBytes},
                                  {"step_s_plain", plain},
                                  {"step_s_during_save", median(t.asyncStep)},
                                  {"ratio", median(t.asyncStep) / plain},
                                  {"goal_ratio", kAsyncGoal},
                                  {"save_s", median(t.asyncSave)},
                                  {"snapshot_s", median(t.snapshot)},
                                  {"steps_during_save", median(t.stepsDuring)},
                                  {"resume_s", resume}};
  std::cout << sync.dump() << "\n" << async.dump() << std::endl;
  std::filesystem::remove_all(dir);
  return 0;
}
