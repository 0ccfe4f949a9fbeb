// Parallel equals serial, end to end: the Trainer on 4 processes (pp x tp,
// pp x dp, tp x dp) gives the same losses as the same Trainer on one process,
// same model, seed and data, within 1e-4 (float32 CPU).
//
// What is compared, per rank: the losses of the first kSteps steps (each
// depends on every earlier update) and then the validation loss, which sees
// the parameters after the last update.
#include <gtest/gtest.h>

#include "trainer_test_util.h"

namespace strata::train::testing {
namespace {

constexpr int kSteps = 5;
constexpr int kProcesses = 4;
constexpr double kTolerance = 1e-4;

// kSteps losses, then the validation loss after them.
std::vector<double> trainAndEvaluate(const TrainConfig& config, std::shared_ptr<World> world) {
  Trainer trainer(config, std::move(world));
  std::vector<double> record = trainSteps(trainer, kSteps);
  record.push_back(trainer.evaluate(1));
  return record;
}

TrainConfig parallelConfig(int64_t pp, int64_t dp, int64_t tp, const std::string& schedule,
                           bool tiedEmbeddings) {
  TrainConfig c = tinyConfig();
  c.parallel.pp = pp;
  c.parallel.dp = dp;
  c.parallel.tp = tp;
  c.parallel.schedule = schedule;
  c.model.tiedEmbeddings = tiedEmbeddings;
  return c;
}

void expectParallelEqualsSerial(const std::string& name, const TrainConfig& parallel) {
  std::string dir = sharedDir(name);
  strata::testing::runInProcesses(
      kProcesses,
      [&](const strata::testing::RankContext& ctx) {
        writeValues(dir, "record", ctx.rank, trainAndEvaluate(parallel, World::init()));
      },
      sharedDirOptions(dir));

  TrainConfig serial = parallel;
  serial.parallel.pp = serial.parallel.dp = serial.parallel.tp = 1;
  serial.parallel.schedule = "1f1b";
  serial.parallel.zero = false;  // plain AdamW
  std::vector<double> expected = trainAndEvaluate(serial, singleProcessWorld());
  // Equal numbers only mean something when training moves them.
  ASSERT_LT(expected[kSteps - 1], expected[0] - 0.01) << "the serial run does not learn";

  for (int rank = 0; rank < kProcesses; ++rank) {
    std::vector<double> got = readValues(dir, "record", rank);
    ASSERT_EQ(got.size(), expected.size()) << "rank " << rank << " recorded too little";
    for (int i = 0; i < kSteps; ++i) {
      EXPECT_NEAR(got[i], expected[i], kTolerance) << "rank " << rank << ", loss of step " << i + 1;
    }
    EXPECT_NEAR(got[kSteps], expected[kSteps], kTolerance)
        << "rank " << rank << ", validation loss after step " << kSteps;
  }
  removeSharedDir(dir);
}

// The tied embedding lives on the first and the last stage; the trainer sums
// its two gradients. Vocab-parallel embedding and head over tp. Zero-bubble
// H1 splits each backward into B (input gradient) and W (weight gradient),
// which must still add up to the same gradients.
TEST(TrainerParallelEqualsSerial, Pp2Tp2TiedEmbeddingsZbH1) {
  expectParallelEqualsSerial("pp2tp2", parallelConfig(2, 1, 2, "zb-h1", true));
}

TEST(TrainerParallelEqualsSerial, Pp2Tp2UntiedGpipe) {
  expectParallelEqualsSerial("pp2tp2gpipe", parallelConfig(2, 1, 2, "gpipe", false));
}

// Each replica pipelines its half of the global batch (2 micro-batches).
TEST(TrainerParallelEqualsSerial, Pp2Dp2TiedEmbeddings) {
  expectParallelEqualsSerial("pp2dp2", parallelConfig(2, 2, 1, "1f1b", true));
}

// ZB-H1's weight-gradient actions must reach data parallelism's hooks.
TEST(TrainerParallelEqualsSerial, Pp2Dp2ZbH1) {
  expectParallelEqualsSerial("pp2dp2zb", parallelConfig(2, 2, 1, "zb-h1", false));
}

TEST(TrainerParallelEqualsSerial, Tp2Dp2) {
  expectParallelEqualsSerial("tp2dp2", parallelConfig(1, 2, 2, "1f1b", true));
}

// A vocabulary tp does not divide is padded: zero rows in the embedding (and
// the untied head), padding logits masked, so the losses are the serial ones.
TEST(TrainerParallelEqualsSerial, Tp2Dp2OddVocabularyTied) {
  TrainConfig config = parallelConfig(1, 2, 2, "1f1b", true);
  config.model.vocab = 257;
  expectParallelEqualsSerial("tp2oddvocab", config);
}

TEST(TrainerParallelEqualsSerial, Pp2Tp2OddVocabularyUntied) {
  TrainConfig config = parallelConfig(2, 1, 2, "gpipe", false);
  config.model.vocab = 259;
  expectParallelEqualsSerial("pp2tp2oddvocab", config);
}

// ZeRO-1: each dp rank updates only its shard of the AdamW state.
TEST(TrainerParallelEqualsSerial, Tp2Dp2Zero1) {
  TrainConfig config = parallelConfig(1, 2, 2, "1f1b", true);
  config.parallel.zero = true;
  expectParallelEqualsSerial("tp2dp2zero", config);
}

}  // namespace
}  // namespace strata::train::testing
