// A checkpoint moves between layouts: train at layout A, save, resume at
// layout B (fresh processes, as a restart on another machine count would be),
// and the losses continue those of an uninterrupted run at A within 1e-5
// relative (the reduction order changes with the layout). Parameters and
// AdamW's moments and step counts are rebuilt from the tensor index,
// ZeRO's flat shards included; also through `strata checkpoint convert`.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cmath>
#include <cstdio>
#include <filesystem>

#include "strata/checkpoint/checkpoint.h"
#include "strata_command.h"
#include "trainer_test_util.h"

namespace strata::train::testing {
namespace {

constexpr int kReshardSavedAt = 3;
constexpr int kReshardTotal = 6;

struct Layout {
  int pp = 1, dp = 1, tp = 1, zero = 0;
  int virtualStages = 1;                  // above 1: the interleaved 1F1B schedule
  std::vector<int64_t> stageLayers = {};  // empty: the even cut
  int cp = 1;
  int ep = 1;
  std::string schedule = "";  // empty: 1f1b, or interleaved-1f1b with virtual stages
  int processes() const { return pp * dp * cp * tp; }
};

TrainConfig at(TrainConfig config, Layout layout) {
  config.parallel.pp = layout.pp;
  config.parallel.dp = layout.dp;
  config.parallel.tp = layout.tp;
  config.parallel.cp = layout.cp;
  config.parallel.ep = layout.ep;
  config.parallel.zero = layout.zero;
  config.parallel.virtualStages = layout.virtualStages;
  config.parallel.stageLayers = layout.stageLayers;
  if (layout.virtualStages > 1) config.parallel.schedule = "interleaved-1f1b";
  if (!layout.schedule.empty()) config.parallel.schedule = layout.schedule;
  return config;
}

// `strata checkpoint convert`'s flags for the layout, as at() sets it.
std::string flags(Layout l) {
  std::string text = " --pp " + std::to_string(l.pp) + " --dp " + std::to_string(l.dp) + " --tp " +
                     std::to_string(l.tp);
  if (l.virtualStages > 1)
    text += " --virtual-stages " + std::to_string(l.virtualStages) + " --schedule interleaved-1f1b";
  if (!l.schedule.empty()) text += " --schedule " + l.schedule;
  return text;
}

// One process trains `config` for `steps` steps and saves a checkpoint.
void trainAndSave(const TrainConfig& config, int steps) {
  Trainer trainer(config, singleProcessWorld());
  trainSteps(trainer, steps);
  trainer.saveCheckpoint();
}

// The top-level layers a shard says it holds (its "held_layers"); empty when
// it holds them all.
std::vector<int64_t> heldLayersIn(const std::string& shard) {
  torch::serialize::InputArchive archive;
  archive.load_from(shard);
  torch::Tensor held;
  if (!archive.try_read("held_layers", held)) return {};
  return std::vector<int64_t>(held.data_ptr<int64_t>(), held.data_ptr<int64_t>() + held.numel());
}

// Each converted shard (step kReshardSavedAt) holds the layers the trainer's own
// shard at that layout holds (step kReshardTotal, saved by the resumed run), no more.
void expectConvertedShardsHoldAsTheTrainers(const std::string& dir, int ranks) {
  for (int rank = 0; rank < ranks; ++rank) {
    char file[32];
    std::snprintf(file, sizeof file, "/rank-%05d.pt", rank);
    EXPECT_EQ(heldLayersIn(stepDirectory(dir, kReshardSavedAt) + file),
              heldLayersIn(stepDirectory(dir, kReshardTotal) + file))
        << "rank " << rank;
  }
}

// With `offline`, B resumes from `strata checkpoint convert`'s copy instead.
void expectResumeAcrossLayouts(const std::string& name, const TrainConfig& base, Layout a, Layout b,
                               bool offline = false) {
  std::string dir = sharedDir(name);
  TrainConfig configA = at(base, a), configB = at(base, b);
  configA.checkpoint.dir = configB.checkpoint.dir = dir + "/checkpoints";
  if (offline) configB.checkpoint.dir = dir + "/converted";
  auto options = sharedDirOptions(dir);
  using strata::testing::RankContext;
  strata::testing::runInProcesses(
      a.processes(),
      [&](const RankContext& ctx) {
        Trainer trainer(configA, World::init());
        writeValues(dir, "uninterrupted", ctx.rank, trainSteps(trainer, kReshardTotal));
      },
      options);
  strata::testing::runInProcesses(
      a.processes(),
      [&](const RankContext&) {
        Trainer trainer(configA, World::init());
        trainSteps(trainer, kReshardSavedAt);
        trainer.saveCheckpoint();
      },
      options);
  if (offline && !strata::testing::inRankProcess()) {
    auto [status, output] = strata("checkpoint convert --from " + configA.checkpoint.dir +
                                   " --to " + configB.checkpoint.dir + flags(b));
    ASSERT_EQ(status, 0) << output;
  }
  strata::testing::runInProcesses(
      b.processes(),
      [&](const RankContext& ctx) {
        Trainer trainer(configB, World::init());
        ASSERT_TRUE(trainer.resumeFromLatest()) << "no checkpoint under " << configB.checkpoint.dir;
        EXPECT_EQ(trainer.stepsDone(), kReshardSavedAt);
        writeValues(dir, "resumed", ctx.rank, trainSteps(trainer, kReshardTotal - kReshardSavedAt));
        if (offline) trainer.saveCheckpoint();
      },
      options);
  if (offline) expectConvertedShardsHoldAsTheTrainers(configB.checkpoint.dir, b.processes());

  std::vector<double> straight = readValues(dir, "uninterrupted", 0);
  std::vector<double> resumed = readValues(dir, "resumed", 0);
  ASSERT_EQ(straight.size(), static_cast<size_t>(kReshardTotal));
  ASSERT_EQ(resumed.size(), static_cast<size_t>(kReshardTotal - kReshardSavedAt));
  for (int i = 0; i < kReshardTotal - kReshardSavedAt; ++i) {
    double expected = straight[kReshardSavedAt + i];
    EXPECT_NEAR(resumed[i], expected, 1e-5 * std::abs(expected))
        << "loss of step " << kReshardSavedAt + i + 1;
  }
  removeSharedDir(dir);
}

TEST(TrainerReshard, Pp2Tp2ToOneProcess) {
  expectResumeAcrossLayouts("reshard-pp2tp2-1", tinyConfig(), {2, 1, 2}, {1, 1, 1});
}

TEST(TrainerReshard, Pp2Tp2ToTp4) {
  expectResumeAcrossLayouts("reshard-pp2tp2-tp4", tinyConfig(), {2, 1, 2}, {1, 1, 4});
}

// The same degrees, but the layers move between the pipeline ranks: 6
// layers in 2 stages are 0-2 and 3-5; in 4 virtual stages rank 0 holds 0-1
// and 4. Each rank's own shard holds the layers it trained before, not the
// ones it holds now, so the load must go through the index.
TEST(TrainerReshard, Pp2ToPp2WithTwoVirtualStages) {
  expectResumeAcrossLayouts("reshard-pp2-v2", tinyConfig(), {2, 1, 1}, {2, 1, 1, 0, 2});
}

// A cut of A's own (as a balanced run records its measured one in
// stage_layers): the checkpoint's config carries it, so B, cut evenly,
// finds that rank 0 trained the embedding only, and reads the blocks it now
// holds from rank 1's shard.
// From 1F1B to ZB-V on the same ranks: rank 1 gave its last layers to
// rank 0 (which now holds the head) and took the middle ones.
TEST(TrainerReshard, Pp2OneFOneBToPp2ZbV) {
  Layout zbv{2, 1, 1};
  zbv.schedule = "zb-v";
  expectResumeAcrossLayouts("reshard_zbv", tinyConfig(), {2, 1, 1}, zbv);
}

// The same offline: each converted shard holds its rank's V (rank 0 the
// first and last layers), as the trainer's own at ZB-V does.
TEST(TrainerReshard, OfflineConvertPp2OneFOneBToPp2ZbV) {
  Layout zbv{2, 1, 1};
  zbv.schedule = "zb-v";
  expectResumeAcrossLayouts("reshard-convert-zbv", tinyConfig(), {2, 1, 1}, zbv, true);
}

// From DualPipeV (the tied weight one tensor on rank 0) to one process.
TEST(TrainerReshard, Pp2DualPipeVToOneProcess) {
  TrainConfig config = tinyConfig();
  config.train.microBatch = 1;  // 4 micro-batches: DualPipeV needs 2 x pp
  Layout dualPipeV{2, 1, 1};
  dualPipeV.schedule = "dualpipe-v";
  expectResumeAcrossLayouts("reshard_dpv", config, dualPipeV, {1, 1, 1});
}

TEST(TrainerReshard, Pp2CutOneAndFiveToPp2Even) {
  expectResumeAcrossLayouts("reshard-pp2-cut15", tinyConfig(), {2, 1, 1, 0, 1, {1, 5}}, {2, 1, 1});
}

TEST(TrainerReshard, Pp2Tp2ToPp4) {
  expectResumeAcrossLayouts("reshard-pp2tp2-pp4", tinyConfig(), {2, 1, 2}, {4, 1, 1});
}

// ZeRO's flat shards of the moments, cut back into parameters.
TEST(TrainerReshard, Dp2ZeroToPp2) {
  expectResumeAcrossLayouts("reshard-zero-pp2", tinyConfig(), {1, 2, 1, 1}, {2, 1, 1});
}

TEST(TrainerReshard, OneProcessToPp2Dp2) {
  expectResumeAcrossLayouts("reshard-1-pp2dp2", tinyConfig(), {1, 1, 1}, {2, 2, 1});
}

// Into ZeRO-2 under a pipeline, from tensor parallelism.
TEST(TrainerReshard, Tp2ToPp2Dp2Zero2) {
  expectResumeAcrossLayouts("reshard-tp2-zero2", tinyConfig(), {1, 1, 2}, {2, 2, 1, 2});
}

// 257 tokens pad to 258 rows under tp 2 and to 260 under tp 4; an untied
// head pads like the embedding.
// ZeRO-3's per-parameter pieces of AdamW state, indexed like ZeRO's chunks,
// load into another layout and stage, and back.
TEST(TrainerReshard, Dp2Zero3ToPp2Dp2Zero1) {
  expectResumeAcrossLayouts("reshard-zero3-pp2", tinyConfig(), {1, 2, 1, 3}, {2, 2, 1, 1});
}

TEST(TrainerReshard, Pp2Dp2Zero1ToDp2Tp2Zero3) {
  expectResumeAcrossLayouts("reshard-to-zero3", tinyConfig(), {2, 2, 1, 1}, {1, 2, 2, 3});
}

TEST(TrainerReshard, OddVocabularyTp2ToTp4) {
  TrainConfig config = tinyConfig();
  config.model.vocab = 257;
  config.model.tiedEmbeddings = false;
  expectResumeAcrossLayouts("reshard-vocab", config, {1, 1, 2}, {1, 1, 4});
}

// The Llama family: key/value heads split over tp 2 (2 of them) move into
// a data-parallel ZeRO-1 run; a single key/value head replicated on both tp
// ranks (its gradient summed over tp) moves into a pipeline without tp.
TEST(TrainerReshard, LlamaPp2Tp2ToDp2Zero1) {
  expectResumeAcrossLayouts("reshard-llama-split", tinyLlamaConfig(2), {2, 1, 2}, {1, 2, 1, 1});
}

TEST(TrainerReshard, LlamaReplicatedKvTp2ToPp2) {
  expectResumeAcrossLayouts("reshard-llama-replicated", tinyLlamaConfig(1), {1, 1, 2}, {2, 1, 1});
}

// Context parallelism: the cp ranks hold the same parameters, so a
// checkpoint saved at cp 2 resumes whole sequences at cp 1, and at cp 4.
TEST(TrainerReshard, Cp2ToOneProcess) {
  expectResumeAcrossLayouts("reshard-cp2-1", tinyConfig(), {1, 1, 1, 0, 1, {}, 2}, {});
}

TEST(TrainerReshard, LlamaCp2ToCp4) {
  expectResumeAcrossLayouts("reshard-cp2-4", tinyLlamaConfig(2), {1, 1, 1, 0, 1, {}, 2},
                            {1, 1, 1, 0, 1, {}, 4});
}

// ZeRO-1's moments sharded over the four replicas of dp 2 x cp 2, resumed
// unsharded in a pipeline of two stages.
TEST(TrainerReshard, Dp2Cp2Zero1ToPp2) {
  expectResumeAcrossLayouts("reshard-dp2cp2-zero", tinyConfig(), {1, 2, 1, 1, 1, {}, 2}, {2, 1, 1});
}

// Expert parallelism: each expert is indexed once, by name, from the first
// rank holding it, so a checkpoint saved with the experts split over ep 2
// resumes with all of them in one process, or split over ep 4; ZeRO-1's
// moments of the experts, sharded over their two replicas at dp 4 x ep 2,
// resume unsharded at dp 2 with every expert on every rank.
TEST(TrainerReshard, MoeEp2ToOneProcess) {
  expectResumeAcrossLayouts("reshard-ep2-1", tinyMoeConfig(), {1, 2, 1, 0, 1, {}, 1, 2}, {});
}

TEST(TrainerReshard, MoeEp2ToEp4) {
  expectResumeAcrossLayouts("reshard-ep2-4", tinyMoeConfig(), {1, 2, 1, 0, 1, {}, 1, 2},
                            {1, 4, 1, 0, 1, {}, 1, 4});
}

TEST(TrainerReshard, MoeDp4Ep2Zero1ToDp2) {
  expectResumeAcrossLayouts("reshard-ep2zero", tinyMoeConfig(), {1, 4, 1, 1, 1, {}, 1, 2},
                            {1, 2, 1, 0});
}

// ZeRO-3's expert shards (over the experts' two replicas) resume unsharded
// with each expert on one of four ranks.
TEST(TrainerReshard, MoeDp4Ep2Zero3ToEp4) {
  expectResumeAcrossLayouts("reshard-ep2zero3", tinyMoeConfig(), {1, 4, 1, 3, 1, {}, 1, 2},
                            {1, 4, 1, 0, 1, {}, 1, 4});
}

// Same degrees, another ep: each rank's own shard holds other experts than
// the rank now holds, so the load goes through the index.
TEST(TrainerReshard, MoeDp2Ep1ToDp2Ep2) {
  expectResumeAcrossLayouts("reshard-ep1-ep2", tinyMoeConfig(), {1, 2, 1, 0, 1, {}, 1, 1},
                            {1, 2, 1, 0, 1, {}, 1, 2});
}

// A conversion keeps every expert on every rank (its config says ep 1), so
// a run at ep 2 of the same degrees loads it through the index.
TEST(TrainerReshard, OfflineConvertMoeEp2ToDp2Ep2) {
  Layout ep2{1, 2, 1, 0, 1, {}, 1, 2};
  expectResumeAcrossLayouts("reshard-convert-ep2", tinyMoeConfig(), ep2, ep2, true);
}

TEST(TrainerReshard, OfflineConvertPp2Tp2ToTp4) {
  expectResumeAcrossLayouts("reshard-convert", tinyConfig(), {2, 1, 2}, {1, 1, 4}, true);
}

// Offline into a ZeRO run's layout: the converted plain AdamW state loads
// into ZeRO's flat shards.
TEST(TrainerReshard, OfflineConvertDp2ZeroToPp2Dp2Zero1) {
  expectResumeAcrossLayouts("reshard-convert-zero", tinyConfig(), {1, 2, 1, 1}, {2, 2, 1, 1}, true);
}

// The source's batch (8 of micro-batches of 2) does not fit dp 8; the flags
// give the batch the new layout is checked with, and its config records it.
// Each replica's shard after the first is a copy, and says so.
TEST(TrainerReshard, OfflineConvertTakesTheBatchFromItsFlags) {
  std::string dir = sharedDir("reshard-convert-batch");
  TrainConfig config = tinyConfig();
  config.checkpoint.dir = dir + "/checkpoints";
  trainAndSave(config, 1);
  std::string convert =
      "checkpoint convert --from " + config.checkpoint.dir + " --to " + dir + "/converted --dp 8";
  auto [status, output] = strata(convert);
  EXPECT_EQ(status, 2) << output;
  for (const char* part :
       {"global_batch 8 is not divisible by micro_batch 2 x dp 8", "--micro-batch"})
    EXPECT_NE(output.find(part), std::string::npos) << part << " not in:\n" << output;
  std::tie(status, output) = strata(convert + " --micro-batch 1");
  ASSERT_EQ(status, 0) << output;
  for (const char* part :
       {"shard 1 of 8: rank-00000.pt", "shard 8 of 8: rank-00007.pt", "a copy of rank-00000.pt"})
    EXPECT_NE(output.find(part), std::string::npos) << part << " not in:\n" << output;
  CheckpointInfo info = readCheckpointInfo(stepDirectory(dir + "/converted", 1));
  EXPECT_NE(info.configToml.find("micro_batch = 1"), std::string::npos) << info.configToml;
  ASSERT_EQ(info.shards.size(), 8u);
  for (const ShardRecord& shard : info.shards) EXPECT_EQ(shard.sha256, info.shards[0].sha256);
  removeSharedDir(dir);
}

// Into its own folder the conversion would overwrite the shards it reads;
// into a complete checkpoint, lose it. Both are refused before anything is
// written, and the source still verifies.
TEST(TrainerReshard, OfflineConvertNeverWritesOverACompleteCheckpoint) {
  std::string dir = sharedDir("reshard-convert-over");
  TrainConfig config = tinyConfig();
  config.checkpoint.dir = dir + "/checkpoints";
  trainAndSave(config, 1);
  std::string from = " --from " + config.checkpoint.dir;
  auto [status, output] =
      strata("checkpoint convert" + from + " --to " + config.checkpoint.dir + " --tp 2");
  EXPECT_EQ(status, 2) << output;
  EXPECT_NE(output.find("over the checkpoint it reads"), std::string::npos) << output;
  std::tie(status, output) = strata("checkpoint inspect --verify " + config.checkpoint.dir);
  EXPECT_EQ(status, 0) << output;
  EXPECT_NE(output.find("on 1 rank"), std::string::npos) << output;

  std::string into = " --to " + dir + "/converted";
  std::tie(status, output) = strata("checkpoint convert" + from + into + " --tp 2");
  ASSERT_EQ(status, 0) << output;
  std::tie(status, output) = strata("checkpoint convert" + from + into + " --tp 4");
  EXPECT_EQ(status, 2) << output;
  EXPECT_NE(output.find("already holds a complete checkpoint"), std::string::npos) << output;
  std::tie(status, output) = strata("checkpoint inspect --verify " + dir + "/converted");
  EXPECT_EQ(status, 0) << output;
  EXPECT_NE(output.find("on 2 ranks"), std::string::npos) << output;
  removeSharedDir(dir);
}

TEST(TrainerReshard, InspectShowsTheIndexAndVerifyFindsACorruptShard) {
  std::string dir = sharedDir("reshard-inspect");
  TrainConfig config = tinyConfig();
  config.checkpoint.dir = dir + "/checkpoints";
  trainAndSave(config, 2);
  auto [status, output] = strata("checkpoint inspect " + config.checkpoint.dir);
  EXPECT_EQ(status, 0) << output;
  for (const char* part :
       {"step: 2", "format: 2", "hidden 32", "on 1 rank",
        "block0.attention.qkv.weight parameter [96, 32] float32 12288 bytes",
        "block0.attention.qkv.weight exp_avg [96, 32]", "step 2", "shards not reread"})
    EXPECT_NE(output.find(part), std::string::npos) << part << " not in:\n" << output;
  std::tie(status, output) = strata("checkpoint inspect --verify " + config.checkpoint.dir);
  EXPECT_EQ(status, 0) << output;
  EXPECT_NE(output.find("every shard matches"), std::string::npos) << output;
  flipMiddleByte(stepDirectory(config.checkpoint.dir, 2) + "/rank-00000.pt");
  std::tie(status, output) = strata("checkpoint inspect --verify " + config.checkpoint.dir);
  EXPECT_EQ(status, 1) << output;
  EXPECT_NE(output.find("rank-00000.pt' is corrupt"), std::string::npos) << output;
  removeSharedDir(dir);
}

// What the degrees leave out: the schedule, ep and the ZeRO stage, and a
// line for the experts.
TEST(TrainerReshard, InspectNamesTheExpertsTheirEpAndTheZeroStage) {
  std::string dir = sharedDir("reshard-inspect-moe");
  TrainConfig config = tinyMoeConfig();
  config.parallel.dp = 2;
  config.parallel.ep = 2;
  config.parallel.zero = 1;
  config.checkpoint.dir = dir + "/checkpoints";
  strata::testing::runInProcesses(
      2,
      [&](const strata::testing::RankContext&) {
        Trainer trainer(config, World::init());
        trainSteps(trainer, 1);
        trainer.saveCheckpoint();
      },
      sharedDirOptions(dir));
  auto [status, output] = strata("checkpoint inspect " + config.checkpoint.dir);
  EXPECT_EQ(status, 0) << output;
  for (const char* part : {"layout: pp 1 x dp 2 x tp 1 on 2 ranks, schedule 1f1b, ep 2, ZeRO-1",
                           "experts: experts 4 top_k 2 expert_ffn 32"})
    EXPECT_NE(output.find(part), std::string::npos) << part << " not in:\n" << output;
  removeSharedDir(dir);
}

TEST(TrainerReshard, AnotherModelIsRefusedNamingTheDifference) {
  std::string dir = sharedDir("reshard-model");
  TrainConfig config = tinyConfig();
  config.checkpoint.dir = dir + "/checkpoints";
  trainAndSave(config, 1);
  config.model.hidden = 64;
  Trainer other(config, singleProcessWorld());
  try {
    other.resumeFromLatest();
    ADD_FAILURE() << "a checkpoint of hidden 32 loaded into a model of hidden 64";
  } catch (const CheckpointError& error) {
    EXPECT_NE(std::string(error.what()).find("another model (hidden 32 there, 64 here)"),
              std::string::npos)
        << error.what();
  }
  removeSharedDir(dir);
}

// A mixture of experts resumed as a dense model is refused by name too,
// before any tensor is read.
TEST(TrainerReshard, DenseModelFromAMixtureOfExpertsIsRefusedNamingTheDifference) {
  std::string dir = sharedDir("reshard-moe-model");
  TrainConfig config = tinyMoeConfig();
  config.checkpoint.dir = dir + "/checkpoints";
  trainAndSave(config, 1);
  config.model.moe.experts = 0;
  Trainer other(config, singleProcessWorld());
  try {
    other.resumeFromLatest();
    ADD_FAILURE() << "a checkpoint of 4 experts loaded into a dense model";
  } catch (const CheckpointError& error) {
    EXPECT_NE(std::string(error.what()).find("another model (experts 4 there, 0 here)"),
              std::string::npos)
        << error.what();
  }
  removeSharedDir(dir);
}

}  // namespace
}  // namespace strata::train::testing
