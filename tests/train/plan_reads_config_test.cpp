// `strata plan --config` reads a strata train config with its own reader
// (strata/plan/train_config.h: the planner stays free of the trainer). Both
// must see the same run: the same defaults and every key the planner uses.
#include <gtest/gtest.h>

#include "strata/config/config_file.h"
#include "strata/plan/train_config.h"

namespace strata::train {
namespace {

// Every field the planner reads, as strata train holds it and as the planner does.
void expectSameRun(const TrainConfig& c, const plan::ConfiguredRun& run) {
  EXPECT_EQ(run.model.layers, c.model.layers);
  EXPECT_EQ(run.model.hidden, c.model.hidden);
  EXPECT_EQ(run.model.heads, c.model.heads);
  EXPECT_EQ(run.model.ffn, c.model.ffn);
  EXPECT_EQ(run.model.vocab, c.model.vocab);
  EXPECT_EQ(run.model.tiedEmbeddings, c.model.tiedEmbeddings);
  EXPECT_EQ(run.model.dropout, c.model.dropout > 0);
  EXPECT_EQ(run.model.moe.experts, c.model.moe.experts);
  EXPECT_EQ(run.model.moe.topK, c.model.moe.topK);
  EXPECT_EQ(run.model.moe.expertFfn, c.model.moe.expertFfn);
  EXPECT_EQ(run.model.moe.sharedExperts, c.model.moe.sharedExperts);
  EXPECT_EQ(run.model.moe.every, c.model.moe.every);
  EXPECT_EQ(run.model.seqLen, c.train.seqLen);
  EXPECT_EQ(run.globalBatch, c.train.globalBatch);
  EXPECT_EQ(run.layout.microBatch, c.train.microBatch);
  EXPECT_EQ(run.dtype == plan::Dtype::Bf16 ? "bf16" : "fp32", c.train.precision);
  EXPECT_EQ(run.precision.activationBytes, c.train.precision == "fp32" ? 4 : 2);
  EXPECT_EQ(run.layout.pp, c.parallel.pp);
  EXPECT_EQ(run.layout.dp, c.parallel.dp);
  EXPECT_EQ(run.layout.tp, c.parallel.tp);
  EXPECT_EQ(run.layout.cp, c.parallel.cp);
  EXPECT_EQ(plan::cpAlgorithmName(run.layout.cpAlgorithm), c.parallel.cpAlgorithm);
  EXPECT_EQ(run.layout.ep, c.parallel.ep);
  EXPECT_EQ(run.layout.schedule, c.parallel.schedule);
  EXPECT_EQ(run.layout.virtualStages, c.parallel.virtualStages);
  EXPECT_EQ(run.layout.zeroStage, c.parallel.zero);
  EXPECT_EQ(run.layout.sequenceParallel, c.parallel.sequenceParallel);
  EXPECT_EQ(run.layout.recompute, c.parallel.checkpointActivations);
  EXPECT_EQ(run.layout.reshardAfterForward, c.parallel.reshardAfterForward);
}

TEST(PlanReadsConfig, AnEmptyFileIsStrataTrainsDefaultRun) {
  expectSameRun(TrainConfig{}, plan::parseTrainConfigText("", "empty.toml"));
}

TEST(PlanReadsConfig, EveryKeyThePlannerUsesReadsAsStrataTrainReadsIt) {
  TrainConfig c;
  c.model.layers = 8;
  c.model.hidden = 256;
  c.model.heads = 8;
  c.model.ffn = 1024;
  c.model.vocab = 512;
  c.model.context = 512;
  c.model.dropout = 0.1;
  c.model.tiedEmbeddings = false;
  c.parallel.pp = 2;
  c.parallel.dp = 3;
  c.parallel.tp = 2;
  c.parallel.cp = 2;
  c.parallel.cpAlgorithm = "all-to-all";
  c.parallel.schedule = "interleaved-1f1b";
  c.parallel.virtualStages = 2;
  c.parallel.zero = 1;
  c.parallel.sequenceParallel = true;
  c.parallel.checkpointActivations = true;
  c.parallel.reshardAfterForward = false;
  c.train.seqLen = 256;
  c.train.globalBatch = 48;
  c.train.microBatch = 2;
  c.train.precision = "bf16";
  std::string text = configToToml(c);
  TrainConfig trained;
  applyConfigToml(text, "run.toml", trained);
  expectSameRun(trained, plan::parseTrainConfigText(text, "run.toml"));
}

// A llama with MoE blocks spread over ep ranks (the planner refuses MoE on a
// GPT, as strata train does).
TEST(PlanReadsConfig, MixtureOfExpertsKeysReadAsStrataTrainReadsThem) {
  TrainConfig c;
  c.model.architecture = kLlamaArchitecture;
  c.model.tiedEmbeddings = false;
  c.model.kvHeads = 2;
  c.model.moe.experts = 8;
  c.model.moe.topK = 1;
  c.model.moe.expertFfn = 256;
  c.model.moe.sharedExperts = 1;
  c.model.moe.every = 2;
  c.model.moe.capacityFactor = 1.25;
  c.parallel.dp = 4;
  c.parallel.ep = 4;
  c.parallel.zero = 1;
  std::string text = configToToml(c);
  TrainConfig trained;
  applyConfigToml(text, "moe.toml", trained);
  expectSameRun(trained, plan::parseTrainConfigText(text, "moe.toml"));
}

}  // namespace
}  // namespace strata::train
