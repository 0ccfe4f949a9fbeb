// ZeRO-3 in the trainer (--zero 3) equals the independent reference
// (reference_training.h, plain LibTorch) like every other layout: each dp
// rank holds 1/dp of every layer's parameters and gathers a layer while it
// runs, under a pipeline (gradients reduce-scattered once per step, after
// the micro-batches) and with tensor parallelism (the tp shards sharded again).
#include <gtest/gtest.h>

#include <cstdio>

#include "reference_comparison.h"
#include "strata/models/model_family.h"
#include "strata/train/loop/tensor_memory.h"
#include "train/loop/shape_communicator.h"
#include "trainer_test_util.h"

namespace strata::train::testing {
namespace {

TrainConfig zero3(int64_t pp, int64_t dp, int64_t tp, const std::string& schedule, bool tied) {
  TrainConfig c = tinyConfig();
  c.parallel.pp = pp;
  c.parallel.dp = dp;
  c.parallel.tp = tp;
  c.parallel.schedule = schedule;
  c.parallel.zero = 3;
  c.model.tiedEmbeddings = tied;
  return c;
}

// The tied embedding and the head share a unit on the one stage.
TEST(TrainerZero3, Dp2Tied) { expectEqualsReference("z3dp2", zero3(1, 2, 1, "1f1b", true)); }

TEST(TrainerZero3, Dp4Untied) { expectEqualsReference("z3dp4", zero3(1, 4, 1, "1f1b", false)); }

// The tied weight's gradient shards are summed over the first and last stage.
TEST(TrainerZero3, Pp2Dp2GpipeTied) {
  expectEqualsReference("z3pp2gpipe", zero3(2, 2, 1, "gpipe", true));
}

TEST(TrainerZero3, Pp2Dp2OneFOneB) {
  expectEqualsReference("z3pp2", zero3(2, 2, 1, "1f1b", false));
}

// parallel.reshard_after_forward off: a stage's layers stay gathered across
// the step's micro-batches, one gather per layer and step.
TEST(TrainerZero3, Pp2Dp2OneFOneBKeepingLayersGathered) {
  TrainConfig config = zero3(2, 2, 1, "1f1b", true);
  config.parallel.reshardAfterForward = false;
  expectEqualsReference("z3pp2keep", config);
}

// Zero-bubble: the weight gradients come in W actions, after the input
// gradients of B; the layers are gathered for both.
TEST(TrainerZero3, Pp2Dp2ZbH1) { expectEqualsReference("z3zb", zero3(2, 2, 1, "zb-h1", true)); }

TEST(TrainerZero3, Tp2Dp2) { expectEqualsReference("z3tp2", zero3(1, 2, 2, "1f1b", true)); }

// Two model chunks per pipeline rank: the rank's units span both.
TEST(TrainerZero3, Pp2Dp2Interleaved) {
  TrainConfig config = zero3(2, 2, 1, "interleaved-1f1b", true);
  config.parallel.virtualStages = 2;
  expectEqualsReference("z3interleaved", config);
}

// Activation checkpointing recomputes each stage's forward before its
// backward: the layers are gathered again for it.
TEST(TrainerZero3, Pp2Dp2CheckpointedActivations) {
  TrainConfig config = zero3(2, 2, 1, "1f1b", true);
  config.parallel.checkpointActivations = true;
  expectEqualsReference("z3checkpointed", config);
}

// Building never holds the whole model: the blocks come as shells and each
// is built again, alone, as its units are sharded. Over the trainer's
// construction a rank's tensors peak at most a block and a half above what
// it holds once built (at dp 8 its shards and their AdamW moments: 3/8 of
// the model); building whole first, the peak was the
// whole model and a unit.
TEST(TrainerZero3, BuildingHoldsOneBlockAtATime) {
  constexpr int kRanks = 8;
  TrainConfig config = zero3(1, kRanks, 1, "1f1b", false);
  config.train.microBatch = 1;
  config.model.layers = 8;
  config.model.hidden = 64;
  config.model.ffn = 256;
  std::string dir = sharedDir("z3build");
  strata::testing::runInProcesses(
      kRanks,
      [&](const strata::testing::RankContext& ctx) {
        installTensorMemoryCounter();  // before the trainer makes any tensor
        int64_t before = liveTensorBytes();
        resetPeakTensorBytes();
        Trainer trainer(config, World::init());
        double peak = static_cast<double>(peakTensorBytes() - before);
        double built = static_cast<double>(liveTensorBytes() - before);
        writeValues(dir, "built", ctx.rank, {peak, built});
      },
      sharedDirOptions(dir));
  models::ModelSpec spec = trainingModelSpecOf(config);
  torch::nn::Sequential whole =
      models::modelFamily(spec.architecture).build(spec, std::make_shared<ShapeCommunicator>(0, 1));
  double block = 0;
  for (const at::Tensor& p : whole->ptr(1)->parameters())
    block += static_cast<double>(p.numel() * p.element_size());
  for (int rank = 0; rank < kRanks; ++rank) {
    std::vector<double> v = readValues(dir, "built", rank);
    std::printf("rank %d: construction peak %.0f B, held once built %.0f B, one block %.0f B\n",
                rank, v.at(0), v.at(1), block);
    EXPECT_LE(v.at(0), v.at(1) + 1.5 * block)
        << "rank " << rank << ": peak " << v.at(0) << " B, held once built " << v.at(1)
        << " B, one block " << block << " B";
  }
  removeSharedDir(dir);
}

}  // namespace
}  // namespace strata::train::testing
