// Asynchronous checkpoints (--checkpoint-async): the save is a snapshot of
// the step it was started at, whatever training does while the background
// thread writes it; it writes the very bytes a synchronous save writes; and
// a job that dies before the save completed leaves nothing that loads.
#include "strata/checkpoint/async_checkpoint.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "metrics_file.h"
#include "strata/checkpoint/checkpoint.h"
#include "strata/runtime/world.h"
#include "strata/train/train_loop.h"
#include "trainer_test_util.h"

namespace strata::train::testing {
namespace {

namespace fs = std::filesystem;
using strata::testing::lossesInMetrics;
using strata::testing::RankContext;

constexpr int kAsyncSavedAt = 3;
constexpr int kAsyncTotal = 7;

TrainConfig dp2Zero(const std::string& dir) {
  TrainConfig config = tinyConfig();
  config.parallel.dp = 2;
  config.parallel.zero = 1;
  config.checkpoint.dir = dir + "/checkpoints";
  return config;
}

// Started at step 3, completed two steps later (the steps between changed
// every parameter and AdamW moment); resumed in fresh processes, the losses
// equal an uninterrupted run's bit for bit.
TEST(AsyncCheckpoint, ResumesTheStepItWasStartedAtWhileTrainingWentOn) {
  std::string dir = sharedDir("async-resume");
  TrainConfig config = dp2Zero(dir);
  auto options = sharedDirOptions(dir);
  strata::testing::runInProcesses(
      2,
      [&](const RankContext& ctx) {
        Trainer trainer(config, World::init());
        writeValues(dir, "uninterrupted", ctx.rank, trainSteps(trainer, kAsyncTotal));
      },
      options);
  strata::testing::runInProcesses(
      2,
      [&](const RankContext&) {
        Trainer trainer(config, World::init());
        trainSteps(trainer, kAsyncSavedAt);
        AsyncCheckpoint saver;
        trainer.startCheckpoint(saver);
        trainSteps(trainer, 2);
        ASSERT_TRUE(saver.inFlight());
        EXPECT_EQ(saver.finish(trainer.world().comm()), kAsyncSavedAt);
        EXPECT_FALSE(saver.inFlight());
        trainer.step();  // lost with the crash
      },
      options);
  strata::testing::runInProcesses(
      2,
      [&](const RankContext& ctx) {
        Trainer trainer(config, World::init());
        ASSERT_TRUE(trainer.resumeFromLatest());
        EXPECT_EQ(trainer.stepsDone(), kAsyncSavedAt);
        writeValues(dir, "resumed", ctx.rank, trainSteps(trainer, kAsyncTotal - kAsyncSavedAt));
      },
      options);
  for (int rank = 0; rank < 2; ++rank) {
    std::vector<double> straight = readValues(dir, "uninterrupted", rank);
    std::vector<double> resumed = readValues(dir, "resumed", rank);
    ASSERT_EQ(resumed.size(), static_cast<size_t>(kAsyncTotal - kAsyncSavedAt));
    for (int i = 0; i < kAsyncTotal - kAsyncSavedAt; ++i)
      EXPECT_EQ(resumed[i], straight[kAsyncSavedAt + i]) << "rank " << rank << ", step " << i + 4;
  }
  removeSharedDir(dir);
}

// The shards are written and durable, but the job ends before the ranks
// agreed to complete the save: no COMPLETE, so the latest checkpoint that
// loads is the one before, and resuming takes it.
TEST(AsyncCheckpoint, AJobThatDiesBeforeTheSaveCompletedLeavesNothingThatLoads) {
  std::string dir = sharedDir("async-crash");
  TrainConfig config = dp2Zero(dir);
  strata::testing::runInProcesses(
      2,
      [&](const RankContext&) {
        Trainer trainer(config, World::init());
        trainSteps(trainer, 2);
        trainer.saveCheckpoint();
        trainSteps(trainer, 2);
        AsyncCheckpoint saver;
        trainer.startCheckpoint(saver);
        // The destructor waits for this rank's write and completes nothing.
      },
      sharedDirOptions(dir));
  std::string unfinished = stepDirectory(config.checkpoint.dir, 4);
  EXPECT_TRUE(fs::exists(unfinished + "/rank-00000.pt"));
  EXPECT_TRUE(fs::exists(unfinished + "/rank-00001.pt"));
  EXPECT_FALSE(fs::exists(unfinished + "/COMPLETE"));
  EXPECT_EQ(findLatestComplete(config.checkpoint.dir), stepDirectory(config.checkpoint.dir, 2));
  EXPECT_THROW(readCheckpointInfo(unfinished), CheckpointError);
  removeSharedDir(dir);
}

std::string readText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A whole run with saves every 2 steps, synchronous and asynchronous: the
// same losses, the same checkpoints byte for byte (metadata.toml records
// every shard's SHA-256), the older ones pruned after newer ones complete.
void expectTheSameCheckpointsInTheBackground(int zero) {
  std::string dir = sharedDir("async-run-zero" + std::to_string(zero));
  std::map<bool, TrainConfig> configs;
  for (bool async : {false, true}) {
    TrainConfig config = dp2Zero(dir + (async ? "/async" : "/sync"));
    config.parallel.zero = zero;
    config.train.steps = 6;
    config.train.evalEvery = 0;
    config.train.outDir = dir + (async ? "/async" : "/sync") + "/run";
    config.checkpoint.every = 2;
    config.checkpoint.keep = 2;
    config.checkpoint.async = async;
    configs[async] = config;
  }
  for (bool async : {false, true}) {
    strata::testing::runInProcesses(
        2,
        [&](const RankContext& ctx) {
          std::ostringstream log;
          Trainer trainer(configs[async], World::init());
          runTraining(trainer, log);
          if (ctx.rank == 0) std::ofstream(configs[async].train.outDir + "/log.txt") << log.str();
        },
        sharedDirOptions(dir));
  }
  std::string log = readText(configs[true].train.outDir + "/log.txt");
  EXPECT_NE(log.find("the checkpoint of step 2 is complete (written in the background during"),
            std::string::npos)
      << log;
  EXPECT_EQ(lossesInMetrics(configs[true].train.outDir + "/metrics.jsonl"),
            lossesInMetrics(configs[false].train.outDir + "/metrics.jsonl"));
  for (int64_t step : {4, 6}) {
    CheckpointInfo sync = readCheckpointInfo(stepDirectory(configs[false].checkpoint.dir, step));
    CheckpointInfo async = readCheckpointInfo(stepDirectory(configs[true].checkpoint.dir, step));
    ASSERT_EQ(async.shards.size(), sync.shards.size());
    for (size_t rank = 0; rank < sync.shards.size(); ++rank) {
      EXPECT_EQ(async.shards[rank].sha256, sync.shards[rank].sha256)
          << "step " << step << ", rank " << rank;
    }
  }
  EXPECT_FALSE(fs::exists(stepDirectory(configs[true].checkpoint.dir, 2)));
  removeSharedDir(dir);
}

TEST(AsyncCheckpoint, ATrainingRunWritesTheSameCheckpointsInTheBackground) {
  expectTheSameCheckpointsInTheBackground(1);
}

// ZeRO-3: the layers are gathered while the snapshot copies them.
TEST(AsyncCheckpoint, AFullyShardedRunWritesTheSameCheckpointsInTheBackground) {
  expectTheSameCheckpointsInTheBackground(3);
}

}  // namespace
}  // namespace strata::train::testing
