// Resume equals an uninterrupted run, bit for bit on CPU.
//
// Three jobs of fresh processes, as a real restart would be: one trains
// kResumeTotal steps straight; one trains kResumeSavedAt steps, saves, makes one more
// step that no checkpoint holds and ends; one resumes from the latest
// checkpoint and trains to kResumeTotal. The resumed losses must equal the
// uninterrupted ones exactly: model, AdamW moments (sharded ones under ZeRO),
// LR schedule and data position all come back.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>

#include "strata/data/prepare.h"
#include "strata/train/data_source.h"
#include "trainer_test_util.h"

namespace strata::train::testing {
namespace {

constexpr int kResumeSavedAt = 3;
constexpr int kResumeTotal = 6;

// `setUp` (when given) adapts the config to the shared folder, in the parent
// and in every rank alike.
void expectResumeEqualsUninterrupted(
    const std::string& name, TrainConfig config, int processes,
    const std::function<void(const std::string&, TrainConfig&)>& setUp = nullptr) {
  std::string dir = sharedDir(name);
  config.checkpoint.dir = dir + "/checkpoints";
  if (setUp) setUp(dir, config);
  auto options = sharedDirOptions(dir);
  using strata::testing::RankContext;

  strata::testing::runInProcesses(
      processes,
      [&](const RankContext& ctx) {
        Trainer trainer(config, World::init());
        writeValues(dir, "uninterrupted", ctx.rank, trainSteps(trainer, kResumeTotal));
      },
      options);
  strata::testing::runInProcesses(
      processes,
      [&](const RankContext&) {
        Trainer trainer(config, World::init());
        trainSteps(trainer, kResumeSavedAt);
        trainer.saveCheckpoint();
        trainer.step();  // lost with the crash
      },
      options);
  strata::testing::runInProcesses(
      processes,
      [&](const RankContext& ctx) {
        Trainer trainer(config, World::init());
        ASSERT_TRUE(trainer.resumeFromLatest()) << "no checkpoint under " << config.checkpoint.dir;
        EXPECT_EQ(trainer.stepsDone(), kResumeSavedAt);
        writeValues(dir, "resumed", ctx.rank, trainSteps(trainer, kResumeTotal - kResumeSavedAt));
      },
      options);

  for (int rank = 0; rank < processes; ++rank) {
    std::vector<double> straight = readValues(dir, "uninterrupted", rank);
    std::vector<double> resumed = readValues(dir, "resumed", rank);
    ASSERT_EQ(straight.size(), static_cast<size_t>(kResumeTotal)) << "rank " << rank;
    ASSERT_EQ(resumed.size(), static_cast<size_t>(kResumeTotal - kResumeSavedAt))
        << "rank " << rank;
    for (int i = 0; i < kResumeTotal - kResumeSavedAt; ++i) {
      EXPECT_EQ(resumed[i], straight[kResumeSavedAt + i])
          << "rank " << rank << ", loss of step " << kResumeSavedAt + i + 1;
    }
  }
  removeSharedDir(dir);
}

TEST(TrainerResume, SingleProcessEqualsUninterrupted) {
  expectResumeEqualsUninterrupted("resume1", tinyConfig(), 1);
}

// Dropout masks depend on each layer's call counter, which the checkpoint
// carries as a buffer.
TEST(TrainerResume, WithDropoutEqualsUninterrupted) {
  TrainConfig config = tinyConfig();
  config.model.dropout = 0.1;
  expectResumeEqualsUninterrupted("resumedrop", config, 1);
}

// Each stage restores its own shard; the tied embedding is on both.
TEST(TrainerResume, Pp2EqualsUninterrupted) {
  TrainConfig config = tinyConfig();
  config.parallel.pp = 2;
  expectResumeEqualsUninterrupted("resumepp2", config, 2);
}

// Under ZeRO-1 each dp rank restores its own shard of both sharded AdamWs.
TEST(TrainerResume, Dp2ZeroEqualsUninterrupted) {
  TrainConfig config = tinyConfig();
  config.parallel.dp = 2;
  config.parallel.zero = 1;
  expectResumeEqualsUninterrupted("resumezero", config, 2);
}

// Under ZeRO-3 each dp rank restores its shards of the AdamW state from its
// own file; the parameters are saved and loaded whole, each layer gathered.
TEST(TrainerResume, Dp2Zero3EqualsUninterrupted) {
  TrainConfig config = tinyConfig();
  config.parallel.dp = 2;
  config.parallel.zero = 3;
  expectResumeEqualsUninterrupted("resumezero3", config, 2);
}

TEST(TrainerResume, Pp2Dp2Zero3EqualsUninterrupted) {
  TrainConfig config = tinyConfig();
  config.parallel.pp = 2;
  config.parallel.dp = 2;
  config.parallel.zero = 3;
  expectResumeEqualsUninterrupted("resumepp2zero3", config, 4);
}

// A prepared dataset (byte tokenizer, 24 documents of 30 bytes, a quarter
// held out) so small that an epoch is 4 global batches: the resumed steps 4
// to 6 cross into epoch 1. Each dp rank must continue with exactly its next
// batch of the shuffled order.
void prepareTinyCorpus(const std::string& dir, TrainConfig& config) {
  namespace fs = std::filesystem;
  config.parallel.dp = 2;
  config.data.prepared = dir + "/data/corpus";
  config.data.validationFraction = 0.25;
  if (strata::testing::inRankProcess()) return;  // the parent prepares it once
  fs::create_directories(dir + "/text");
  for (int d = 0; d < 24; ++d) {
    std::ofstream text(dir + "/text/" + std::to_string(100 + d) + ".txt");
    for (int i = 0; i < 30; ++i) text << static_cast<char>('a' + (d * 7 + i * i) % 26);
  }
  PrepareOptions options;
  options.inputs = {dir + "/text"};
  options.output = config.data.prepared;
  prepareData(options);
  DataSplit data = makeDataSplit(config);
  ASSERT_EQ(makeTrainReader(data, config, 0).batchesPerEpoch(), 4);
}

TEST(TrainerResume, PreparedDataDp2AcrossAnEpochEqualsUninterrupted) {
  expectResumeEqualsUninterrupted("resumeprep", tinyConfig(), 2, prepareTinyCorpus);
}

}  // namespace
}  // namespace strata::train::testing
