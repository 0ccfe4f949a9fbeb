#include "strata/config/validate_config.h"

#include <gtest/gtest.h>

#include "test_util.h"

namespace strata::train {
namespace {

// pp 2 x dp 2 x tp 2 on 8 ranks, 4 micro-batches of 2 per replica.
TrainConfig valid3d() {
  TrainConfig c;
  c.parallel.pp = 2;
  c.parallel.dp = 2;
  c.parallel.tp = 2;
  c.model.layers = 4;
  c.train.globalBatch = 16;
  c.train.microBatch = 2;
  return c;
}

void expectInvalid(const TrainConfig& config, int worldSize,
                   const std::vector<std::string>& parts) {
  expectErrorNaming([&] { validateConfig(config, worldSize); }, parts);
}

TEST(ValidateConfig, AcceptsValidLayouts) {
  EXPECT_NO_THROW(validateConfig(TrainConfig{}, 1));
  EXPECT_NO_THROW(validateConfig(valid3d(), 8));
  TrainConfig interleaved = valid3d();
  interleaved.parallel.schedule = "interleaved-1f1b";
  interleaved.parallel.virtualStages = 2;
  EXPECT_NO_THROW(validateConfig(interleaved, 8));
}

TEST(ValidateConfig, WorldSizeMustBeTheProduct) {
  expectInvalid(valid3d(), 6, {"world size 6 != pp 2 x dp 2 x tp 2"});
}

// Context parallelism: in the product, two chunks of every sequence per cp
// rank, sequence parallel over each rank's share, no dropout, and for the
// all-to-all whole heads and kv heads of each tp rank per cp rank.
TEST(ValidateConfig, ContextParallelSplitsSequencesAndHeads) {
  TrainConfig c = valid3d();
  c.parallel.cp = 2;
  EXPECT_NO_THROW(validateConfig(c, 16));
  expectInvalid(c, 8, {"world size 8 != pp 2 x dp 2 x cp 2 x tp 2 = 16"});
  c.train.seqLen = 102;
  c.parallel.sequenceParallel = true;
  c.model.dropout = 0.1;
  c.parallel.cpAlgorithm = "tree";
  expectInvalid(c, 16,
                {"train.seq_len 102 is not divisible by 2 x cp = 4",
                 "train.seq_len 102 / cp 2 is not divisible by tp 2", "model.dropout 0.1 with cp 2",
                 "parallel.cp_algorithm must be ring or all-to-all"});
  TrainConfig a2a = valid3d();
  a2a.parallel.cp = 4;
  a2a.parallel.cpAlgorithm = "all-to-all";
  expectInvalid(a2a, 32, {"each tp rank has 2 query heads and 2 kv heads; cp must divide both"});
  a2a.parallel.cpAlgorithm = "ring";
  EXPECT_NO_THROW(validateConfig(a2a, 32));
}

// Mixture of experts: the llama family only, ep carved out of dp x cp and
// dividing the experts, tp dividing each expert's ffn, no sequence
// parallelism, no ZeRO-3 at ep > 1, and ep only with experts.
TEST(ValidateConfig, ExpertsAndExpertParallelism) {
  TrainConfig c = valid3d();
  c.model.architecture = "llama";
  c.model.tiedEmbeddings = false;
  c.model.moe.experts = 8;
  c.model.moe.expertFfn = 64;
  c.parallel.ep = 2;
  EXPECT_NO_THROW(validateConfig(c, 8));
  c.parallel.ep = 4;
  expectInvalid(c, 8, {"parallel.ep 4 does not divide dp x cp = 2"});
  c.parallel.ep = 2;
  c.parallel.sequenceParallel = true;
  expectInvalid(c, 8, {"do not take parallel.sequence_parallel"});
  c = valid3d();
  c.model.architecture = "llama";
  c.model.moe.experts = 5;
  c.model.moe.expertFfn = 64;
  c.parallel.ep = 2;
  c.parallel.dp = 4;
  c.parallel.pp = 1;
  c.train.globalBatch = 8;
  expectInvalid(c, 8, {"model.moe.experts 5 is not divisible by ep 2"});
  c.model.moe.experts = 8;
  c.model.moe.topK = 9;
  expectInvalid(c, 8, {"model.moe.top_k 9 must be between 1 and the 8 experts"});
  c.model.moe.topK = 2;
  c.model.moe.expertFfn = 63;
  expectInvalid(c, 8, {"model.moe.expert_ffn 63 is not divisible by tp 2"});
  TrainConfig gpt = valid3d();  // both families take experts
  gpt.model.moe.experts = 4;
  gpt.model.moe.expertFfn = 64;
  EXPECT_NO_THROW(validateConfig(gpt, 8));
  TrainConfig dense = valid3d();
  dense.parallel.ep = 2;
  expectInvalid(dense, 8, {"parallel.ep 2 spreads experts, but the model has none"});
}

// The V schedules cut the model into 2 x pp stages, two on every rank.
TEST(ValidateConfig, VSchedulesCutTwoStagesPerRank) {
  TrainConfig c = valid3d();
  c.parallel.schedule = "zb-v";
  EXPECT_NO_THROW(validateConfig(c, 8));
  c.parallel.stageLayers = {3, 3};
  expectInvalid(c, 8, {"has 2 counts, one a stage is 4 (2 x pp 2 in a V for zb-v)"});
  c.parallel.stageLayers = {1, 2, 2, 1};
  EXPECT_NO_THROW(validateConfig(c, 8));
  c = valid3d();
  c.parallel.schedule = "dualpipe-v";
  EXPECT_NO_THROW(validateConfig(c, 8));  // 4 micro-batches = 2 x pp
  c.train.globalBatch = 12;               // 3 micro-batches
  expectInvalid(c, 8, {"schedule dualpipe-v cannot run 3 micro-batches", "pp 2"});
  c = valid3d();
  c.parallel.schedule = "zb-v";
  c.parallel.virtualStages = 2;
  expectInvalid(c, 8, {"'zb-v' has 2 stages per rank, but virtual stages 2"});
}

TEST(ValidateConfig, LayersMustFillEveryStage) {
  TrainConfig c = valid3d();
  c.model.layers = 1;
  expectInvalid(c, 8, {"model.layers 1", "pp 2"});
  c = valid3d();
  c.parallel.schedule = "interleaved-1f1b";
  c.parallel.virtualStages = 4;
  expectInvalid(c, 8, {"model.layers 4", "pp 2 x virtual stages 4 = 8"});
}

// An explicit cut counts the embedding, the blocks and the head: 6 pipeline
// layers for 4 blocks.
TEST(ValidateConfig, StageLayersCutEveryLayerOnce) {
  TrainConfig c = valid3d();
  c.parallel.stageLayers = {1, 5};
  EXPECT_NO_THROW(validateConfig(c, 8));
  c.parallel.stageLayers = {1, 2, 3};
  expectInvalid(c, 8, {"parallel.stage_layers [1, 2, 3] has 3 counts, one a stage is 2 (pp 2)"});
  c.parallel.stageLayers = {2, 3};
  expectInvalid(c, 8,
                {"parallel.stage_layers [2, 3] adds up to 5, but the model has 6 pipeline layers "
                 "(the embedding, model.layers 4 blocks, the head)"});
  c.parallel.stageLayers = {0, 6};
  expectInvalid(c, 8, {"parallel.stage_layers [0, 6] gives a stage no layers"});
  c.parallel.schedule = "interleaved-1f1b";
  c.parallel.virtualStages = 2;
  c.parallel.stageLayers = {3, 3};
  expectInvalid(c, 8, {"has 2 counts, one a stage is 4 (pp 2 x virtual stages 2 = 4)"});
}

TEST(ValidateConfig, PartitionIsEvenOrBalanced) {
  TrainConfig c = valid3d();
  c.parallel.partition = "balanced";
  EXPECT_NO_THROW(validateConfig(c, 8));
  c.parallel.partition = "measured";
  expectInvalid(c, 8, {"parallel.partition must be even or balanced, got 'measured'"});
}

// The vocabulary needs no such care: it is padded to a multiple of tp.
TEST(ValidateConfig, TensorParallelDividesHeadsHiddenAndFfn) {
  TrainConfig c = valid3d();
  c.parallel.tp = 4;
  c.parallel.dp = 1;
  c.model.vocab = 258;
  EXPECT_NO_THROW(validateConfig(c, 8));
  c.model.heads = 6;
  c.model.hidden = 6 * 21;
  c.model.ffn = 510;
  expectInvalid(
      c, 8,
      {"model.heads 6 is not divisible by tp 4", "model.hidden 126 is not divisible by tp 4",
       "model.ffn 510 is not divisible by tp 4"});
  c = valid3d();
  c.model.heads = 8;
  c.model.hidden = 100;
  expectInvalid(c, 8, {"model.hidden 100 is not divisible by model.heads 8"});
}

TEST(ValidateConfig, GlobalBatchSplitsIntoMicroBatchesAndReplicas) {
  TrainConfig c = valid3d();
  c.train.globalBatch = 10;
  c.train.microBatch = 3;
  expectInvalid(c, 8, {"train.global_batch 10", "micro_batch 3 x dp 2 = 6"});
}

TEST(ValidateConfig, InterleavedScheduleNeedsWholeGroupsOfMicroBatches) {
  TrainConfig c = valid3d();
  c.parallel.pp = 4;
  c.parallel.tp = 1;
  c.parallel.schedule = "interleaved-1f1b";
  c.parallel.virtualStages = 2;
  c.model.layers = 8;
  c.train.globalBatch = 12;
  c.train.microBatch = 2;  // 12 / (2 x 2) = 3 micro-batches on 4 stages
  expectInvalid(
      c, 8,
      {"interleaved-1f1b", "3 micro-batches", "global batch 12", "micro_batch 2 x dp 2", "pp 4"});
}

TEST(ValidateConfig, ScheduleNamesAreChecked) {
  TrainConfig c = valid3d();
  c.parallel.schedule = "2f2b";
  expectInvalid(c, 8, {"unknown schedule '2f2b'", "gpipe", "1f1b", "interleaved-1f1b", "zb-h1"});
  c = valid3d();
  c.parallel.virtualStages = 2;  // 1f1b has one stage per rank
  expectInvalid(c, 8, {"schedule 1f1b", "virtual"});
}

TEST(ValidateConfig, SequenceMustFitTheContext) {
  TrainConfig c;
  c.train.seqLen = 256;
  c.model.context = 128;
  expectInvalid(c, 1, {"train.seq_len 256", "context 128"});
}

TEST(ValidateConfig, SequenceParallelSplitsTheSequenceOverTp) {
  TrainConfig c = valid3d();
  c.parallel.sequenceParallel = true;
  c.train.seqLen = 127;
  expectInvalid(c, 8, {"train.seq_len 127", "not divisible by tp 2", "sequence_parallel"});
  c.train.seqLen = 128;
  EXPECT_NO_THROW(validateConfig(c, 8));
}

TEST(ValidateConfig, ZeroStageIsZeroToThree) {
  TrainConfig c = valid3d();
  c.parallel.zero = 4;
  expectInvalid(c, 8, {"parallel.zero 4", "0, 1, 2 or 3"});
  c.parallel.zero = -1;
  expectInvalid(c, 8, {"parallel.zero -1", "0, 1, 2 or 3"});
  c.parallel.zero = 3;
  EXPECT_NO_THROW(validateConfig(c, 8));
}

TEST(ValidateConfig, ArchitectureIsKnownAndGpt2HasATiedHead) {
  TrainConfig c = valid3d();
  c.model.architecture = "mamba";
  expectInvalid(c, 8, {"model.architecture", "strata, gpt2 or llama", "'mamba'"});
  c.model.architecture = kGpt2Architecture;
  EXPECT_NO_THROW(validateConfig(c, 8));
  c.model.tiedEmbeddings = false;
  expectInvalid(c, 8, {"model.architecture gpt2", "model.tied_embeddings = true"});
  c = valid3d();
  c.model.kvHeads = 2;
  expectInvalid(c, 8, {"model.kv_heads 2 is for architecture llama"});
}

// The Llama family's keys, and its attention's split over tp: kv heads
// split (tp divides them) or replicated (they divide tp), nothing between.
TEST(ValidateConfig, LlamaKeysAndKvHeadsOverTp) {
  TrainConfig c = valid3d();  // tp 2, hidden 128, heads 4
  c.model.architecture = kLlamaArchitecture;
  c.model.kvHeads = 2;
  EXPECT_NO_THROW(validateConfig(c, 8));
  c.model.kvHeads = 1;  // replicated over both tp ranks
  EXPECT_NO_THROW(validateConfig(c, 8));
  c.model.kvHeads = 3;
  expectInvalid(c, 8, {"model.kv_heads 3 does not divide model.heads 4"});
  c.model.heads = 6;
  c.model.hidden = 96;
  c.parallel.tp = 4;
  c.parallel.dp = 1;
  expectInvalid(c, 8, {"model.kv_heads 3 can be neither split over tp 4"});
  c = valid3d();
  c.model.architecture = kLlamaArchitecture;
  c.model.hidden = 36;  // head dimension 9
  c.model.heads = 4;
  c.model.dropout = 0.1;
  c.model.ropeTheta = 0;
  c.model.rmsNormEps = -1;
  c.model.kvHeads = -2;
  expectInvalid(c, 8,
                {"even head dimension", "model.dropout must be 0", "model.rope_theta must be > 0",
                 "model.rms_norm_eps must be > 0", "model.kv_heads must be >= 0"});
}

TEST(ValidateConfig, RangesAndChoices) {
  TrainConfig c;
  c.model.vocab = 100;
  expectInvalid(c, 1, {"model.vocab 100", "256"});
  c = TrainConfig{};
  c.parallel.pp = 0;
  c.train.lr = -1;
  c.train.precision = "fp8";
  c.data.validationFraction = 1.5;
  expectInvalid(c, 1,
                {"parallel.pp must be >= 1, got 0", "train.lr must be > 0, got -1", "fp8",
                 "data.validation_fraction", "1.5"});
  c = TrainConfig{};
  c.train.steps = 20;  // under the default warmup of 30
  expectInvalid(c, 1, {"train.warmup_steps 30 is more than train.steps 20", "--warmup-steps"});
  c = TrainConfig{};
  c.checkpoint.resume = true;
  expectInvalid(c, 1, {"checkpoint.resume needs checkpoint.dir"});
  c = TrainConfig{};
  c.train.spikeRollback = true;
  c.train.spikeZscore = 0;
  expectInvalid(c, 1,
                {"train.spike_rollback needs checkpoint.dir, to roll back to",
                 "train.spike_rollback needs train.spike_zscore > 0 (spike detection on)"});
}

TEST(ValidateConfig, ListsEveryProblemAtOnce) {
  TrainConfig c = valid3d();
  c.model.heads = 3;
  c.train.seqLen = 1000;
  c.parallel.schedule = "zb";
  std::vector<std::string> problems = configProblems(c, 4);
  // world size, heads % tp, hidden % heads, seq_len, schedule name
  EXPECT_EQ(problems.size(), 5u);
}

}  // namespace
}  // namespace strata::train
