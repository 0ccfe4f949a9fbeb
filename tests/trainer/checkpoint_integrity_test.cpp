// A damaged checkpoint never loads silently, and an unfinished one is never
// picked: the Trainer's resume, end to end, on one process.
//
// Each Trainer gets a job of its own (singleProcessWorld), as a restarted
// process would.
#include <gtest/gtest.h>

#include <filesystem>

#include "strata/checkpoint/checkpoint.h"
#include "trainer_test_util.h"

namespace strata::train::testing {
namespace {

namespace fs = std::filesystem;

TrainConfig checkpointedConfig(const std::string& dir) {
  TrainConfig c = tinyConfig();
  c.checkpoint.dir = dir;
  return c;
}

std::string shardOf(const std::string& dir, int64_t step) {
  return (fs::path(stepDirectory(dir, step)) / "rank-00000.pt").string();
}

// Runs resume, expecting a CheckpointError whose message holds every part.
void expectResumeFails(const TrainConfig& config, const std::vector<std::string>& parts) {
  Trainer trainer(config, singleProcessWorld());
  try {
    trainer.resumeFromLatest();
    ADD_FAILURE() << "resuming from a damaged checkpoint did not throw";
  } catch (const CheckpointError& e) {
    for (const std::string& part : parts) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos)
          << "'" << part << "' not in: " << e.what();
    }
  }
}

TEST(TrainerCheckpoint, CorruptedShardNamesFileAndChecksums) {
  std::string dir = sharedDir("corrupt");
  TrainConfig config = checkpointedConfig(dir);
  {
    Trainer trainer(config, singleProcessWorld());
    trainSteps(trainer, 2);
    trainer.saveCheckpoint();
  }
  std::string expectedSha = readCheckpointInfo(stepDirectory(dir, 2)).shards.at(0).sha256;
  flipMiddleByte(shardOf(dir, 2));
  expectResumeFails(config,
                    {shardOf(dir, 2), "corrupt", "sha256 expected " + expectedSha, ", actual "});
  removeSharedDir(dir);
}

TEST(TrainerCheckpoint, TruncatedShardNamesFileAndSizes) {
  std::string dir = sharedDir("truncated");
  TrainConfig config = checkpointedConfig(dir);
  {
    Trainer trainer(config, singleProcessWorld());
    trainSteps(trainer, 2);
    trainer.saveCheckpoint();
  }
  std::string shard = shardOf(dir, 2);
  uintmax_t size = fs::file_size(shard);
  truncateBy(shard, 64);
  expectResumeFails(config, {shard, "expected " + std::to_string(size) + " bytes",
                             "found " + std::to_string(size - 64)});
  removeSharedDir(dir);
}

// Saves at steps 2 and 4; then the save of step 4 loses its COMPLETE marker
// (killed after the metadata) and a step 6 holds only a shard (killed while
// shards were written). Resume must take step 2 and continue exactly as the
// original run did.
TEST(TrainerCheckpoint, HalfWrittenSavesAreSkipped) {
  std::string dir = sharedDir("halfwritten");
  TrainConfig config = checkpointedConfig(dir);
  double lossOfStep3 = 0;
  {
    Trainer trainer(config, singleProcessWorld());
    trainSteps(trainer, 2);
    trainer.saveCheckpoint();
    lossOfStep3 = trainer.step().loss;
    trainer.step();
    trainer.saveCheckpoint();
  }
  ASSERT_EQ(findLatestComplete(dir), stepDirectory(dir, 4));
  fs::remove(fs::path(stepDirectory(dir, 4)) / "COMPLETE");
  fs::create_directories(stepDirectory(dir, 6));
  fs::copy_file(shardOf(dir, 4), shardOf(dir, 6));

  Trainer resumed(config, singleProcessWorld());
  ASSERT_TRUE(resumed.resumeFromLatest());
  EXPECT_EQ(resumed.stepsDone(), 2);
  EXPECT_EQ(resumed.step().loss, lossOfStep3);
  removeSharedDir(dir);
}

// The optimizer state of a ZeRO run is sharded and that of a plain run is
// not; each loads into the other through the tensor index, and the run
// continues as the one that saved would have.
TEST(TrainerCheckpoint, ZeroAndPlainCheckpointsLoadIntoEachOther) {
  for (bool savedWithZero : {true, false}) {
    std::string dir = sharedDir(savedWithZero ? "zerotoplain" : "plaintozero");
    TrainConfig config = checkpointedConfig(dir);
    config.parallel.zero = savedWithZero ? 1 : 0;
    double lossOfStep2 = 0;
    {
      Trainer trainer(config, singleProcessWorld());
      trainSteps(trainer, 1);
      trainer.saveCheckpoint();
      lossOfStep2 = trainer.step().loss;
    }
    config.parallel.zero = savedWithZero ? 0 : 1;
    Trainer resumed(config, singleProcessWorld());
    ASSERT_TRUE(resumed.resumeFromLatest());
    EXPECT_NEAR(resumed.step().loss, lossOfStep2, 1e-5 * lossOfStep2);
    removeSharedDir(dir);
  }
}

}  // namespace
}  // namespace strata::train::testing
