// ZeRO-3 in the trainer (--zero 3) equals the independent reference
// (reference_training.h, plain LibTorch) like every other layout: each dp
// rank holds 1/dp of every layer's parameters and gathers a layer while it
// runs, under a pipeline (gradients reduce-scattered once per step, after
// the micro-batches) and with tensor parallelism (the tp shards sharded again).
#include <gtest/gtest.h>

#include <cstdio>

#include "reference_comparison.h"
#include "runtime/shape_communicator.h"
#include "strata/models/model_family.h"
#include "strata/report/tensor_memory.h"
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

// ZeRO-3 over dp 8, one sequence a micro-batch: the construction tests' job.
constexpr int kConstructionRanks = 8;
TrainConfig constructionConfig() {
  TrainConfig config = zero3(1, kConstructionRanks, 1, "1f1b", false);
  config.train.microBatch = 1;
  return config;
}

// Each rank's tensor bytes over the trainer's construction: {peak, held
// once built}, by rank.
std::vector<std::vector<double>> constructionBytes(const TrainConfig& config, int ranks,
                                                   const std::string& name) {
  std::string dir = sharedDir(name);
  strata::testing::runInProcesses(
      ranks,
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
  std::vector<std::vector<double>> bytes;
  for (int rank = 0; rank < ranks; ++rank) bytes.push_back(readValues(dir, "built", rank));
  removeSharedDir(dir);
  return bytes;
}

// Bytes of the parameters of top-level module `layer` of the whole model.
double layerBytes(const TrainConfig& config, size_t layer) {
  models::ModelSpec spec = trainingModelSpecOf(config);
  torch::nn::Sequential whole =
      models::modelFamily(spec.architecture).build(spec, std::make_shared<ShapeCommunicator>(0, 1));
  double bytes = 0;
  for (const at::Tensor& p : whole->ptr(layer)->parameters())
    bytes += static_cast<double>(p.numel() * p.element_size());
  return bytes;
}

// Every rank's construction peak at most `allowance` x `layer` bytes (the
// largest layer, named `what`) above what it holds once built; each rank's
// figures printed.
void expectPeaksWithin(const std::vector<std::vector<double>>& bytes, double allowance,
                       const std::string& what, double layer) {
  for (size_t rank = 0; rank < bytes.size(); ++rank) {
    double peak = bytes[rank].at(0), held = bytes[rank].at(1);
    std::printf("rank %zu: construction peak %.0f B, held once built %.0f B, %s %.0f B\n", rank,
                peak, held, what.c_str(), layer);
    EXPECT_LE(peak, held + allowance * layer)
        << "rank " << rank << ": peak " << peak << " B, held once built " << held << " B, " << what
        << " " << layer << " B";
  }
}

// Building never holds the whole model: the layers come as shells and each
// is built again, alone, as its units are sharded. Over the trainer's
// construction a rank's tensors peak at most a block and a half above what
// it holds once built (at dp 8 its shards and their AdamW moments: 3/8 of
// the model); building whole first, the peak was the whole model and a unit.
TEST(TrainerZero3, BuildingHoldsOneBlockAtATime) {
  TrainConfig config = constructionConfig();
  config.model.layers = 8;
  config.model.hidden = 64;
  config.model.ffn = 256;
  double block = layerBytes(config, 1);
  expectPeaksWithin(constructionBytes(config, kConstructionRanks, "z3build"), 1.5, "one block",
                    block);
}

// The embedding and the head are shells too: a model whose two vocabulary
// tables outweigh its blocks holds one table at a time while it is built.
TEST(TrainerZero3, BuildingHoldsOneVocabularyTableAtATime) {
  TrainConfig config = constructionConfig();
  config.model.layers = 2;
  config.model.vocab = 4096;
  config.model.tiedEmbeddings = false;
  double table = layerBytes(config, static_cast<size_t>(config.model.layers) + 1);
  expectPeaksWithin(constructionBytes(config, kConstructionRanks, "z3buildends"), 1.25, "the head",
                    table);
}

}  // namespace
}  // namespace strata::train::testing
