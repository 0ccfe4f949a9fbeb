// partition = "balanced": the trainer times the layers on every rank (the
// embedding, the head together with the loss it feeds, one block for all
// blocks of its kind), and cuts the pipeline by the averaged times; the cut it made becomes
// parallel.stage_layers of its config, which checkpoints save. (That the measured cut trains what
// the independent reference trains is TrainerEqualsReference's; that a resume with another cut
// finds every layer is TrainerReshard's.)
#include <gtest/gtest.h>

#include "strata/pipeline/pipeline.h"
#include "trainer_test_util.h"

namespace strata::train::testing {
namespace {

// With 65536 tokens the head's product in the loss (micro-batches of 8 x 16
// tokens) takes about three times the embedding and the 4 blocks of width 32
// together, their tp all-reduces included (45 against 14 ms in a run here),
// so the balanced cut gives the head a stage of its own. Timed without its
// loss, the head would be a LayerNorm, the cheapest layer, and join the
// blocks (the cut was {2, 4} with the loss left out).
TEST(TrainerBalancedCut, WeighsTheHeadWithItsLoss) {
  strata::testing::MultiProcessOptions options;
  options.timeout = std::chrono::seconds(240);
  strata::testing::runInProcesses(
      4,
      [&](const strata::testing::RankContext& ctx) {
        TrainConfig config = tinyConfig();
        config.model.vocab = 65536;
        config.train.microBatch = 8;
        config.train.globalBatch = 16;
        config.parallel.pp = 2;
        config.parallel.tp = 2;
        config.parallel.partition = "balanced";
        Trainer trainer(config, World::init());
        const plan::Partition& cut = trainer.pipeline().partition();
        ASSERT_EQ(cut.stages.size(), 2u);
        EXPECT_EQ(trainer.config().parallel.stageLayers, (std::vector<int64_t>{5, 1}))
            << "rank " << ctx.rank << ":\n"
            << trainer.pipeline().partitionTable();
        for (const plan::StageReport& stage : cut.stages) EXPECT_GT(stage.seconds, 0.0);
      },
      options);
}

// An even run keeps the even cut and records it.
TEST(TrainerBalancedCut, EvenCutIsRecordedToo) {
  strata::testing::runInProcesses(2, [&](const strata::testing::RankContext&) {
    TrainConfig config = tinyConfig();
    config.parallel.pp = 2;
    Trainer trainer(config, World::init());
    EXPECT_EQ(trainer.config().parallel.stageLayers, (std::vector<int64_t>{3, 3}));
  });
}

}  // namespace
}  // namespace strata::train::testing
