// The planner against published large-scale training results.
//
// Megatron-LM's SC21 Table 1 and the other published runs with full
// configurations are in published_runs.toml (published_runs_test.cpp).
//
// GPT-3 175B on 120 ml.p4d.24xlarge: AWS Machine Learning Blog, "Train 175+
// billion parameter NLP models with model parallel additions and Hugging Face
// on Amazon SageMaker" (2022): about 32 samples/s, and an expected 25 days to
// train on 240 instances. The layout was not published; the planner's own
// choice is printed next to it.
//
// Llama: the parameter counts of the released checkpoints (the Hugging Face
// model cards' safetensors totals; "The Llama 3 Herd of Models", 2024,
// Table 3 for the shapes): Llama 3 8B 8,030,261,248 and 70B
// 70,553,706,496, Llama 2 7B 6,738,415,616.
#include <gtest/gtest.h>

#include <cstdio>

#include "strata/plan/cost_model.h"

namespace strata::plan {
namespace {

Estimate gpt3OnP4d(int instances, const char* layout) {
  TrainingJob job;
  job.model = modelPreset("gpt3-175b");
  job.cluster = clusterPreset("p4d.24xlarge");
  job.cluster.nodes = instances;
  job.globalBatch = 1536;
  job.tokens = 300e9;
  return evaluateLayout(job, parseLayout(layout));
}

TEST(Published, Gpt3On120And240P4dInstances) {
  // The layout `strata plan` ranks first on 120 instances, and the same
  // pipeline with twice the data parallelism on 240.
  Estimate at120 = gpt3OnP4d(120, "pp10,tp8,dp3,cp4,cp-a2a,mb1,dualpipe-v,zero1,sp");
  Estimate at240 = gpt3OnP4d(240, "pp10,tp8,dp6,cp4,cp-a2a,mb1,dualpipe-v,zero1,sp");
  std::printf("gpt3-175b on 120 p4d: %.1f samples/s (reported ~32), %.1f days for 300B tokens\n",
              at120.samplesPerSecond, at120.daysToTrain);
  std::printf("gpt3-175b on 240 p4d: %.1f samples/s, %.1f days for 300B tokens (reported ~25)\n",
              at240.samplesPerSecond, at240.daysToTrain);
  EXPECT_TRUE(at120.fitsMemory);
  EXPECT_TRUE(at240.fitsMemory);
  // Doubling data parallelism halves the micro-batches per pipeline, so the
  // bubble share grows: close to, but below, twice the throughput.
  double speedup = at240.samplesPerSecond / at120.samplesPerSecond;
  EXPECT_GT(speedup, 1.6);
  EXPECT_LT(speedup, 2.0);
}

// The shape as the release's config.json gives it, written out here rather
// than taken from the preset, which is checked against it.
ModelDesc llamaShape(int layers, int hidden, int heads, int kvHeads, int ffn, int vocab) {
  ModelDesc m{"llama", layers, hidden, heads, ffn, vocab, 8192};
  m.family = Family::kLlama;
  m.kvHeads = kvHeads;
  m.tiedEmbeddings = false;
  return m;
}

TEST(Published, Llama3ParameterCountsAreTheReleasedCheckpoints) {
  ModelDesc eight = llamaShape(32, 4096, 32, 8, 14336, 128256);
  ModelDesc seventy = llamaShape(80, 8192, 64, 8, 28672, 128256);
  EXPECT_DOUBLE_EQ(parameterCount(eight), 8030261248.0);
  EXPECT_DOUBLE_EQ(parameterCount(seventy), 70553706496.0);
  EXPECT_DOUBLE_EQ(parameterCount(modelPreset("llama3-8b")), 8030261248.0);
  EXPECT_DOUBLE_EQ(parameterCount(modelPreset("llama3-70b")), 70553706496.0);
  // Multi-head (kv heads = heads), vocabulary 32000.
  EXPECT_DOUBLE_EQ(parameterCount(modelPreset("llama2-7b")), 6738415616.0);
}

}  // namespace
}  // namespace strata::plan
