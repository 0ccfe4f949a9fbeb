#include "strata/plan/model_desc.h"

#include <gtest/gtest.h>

#include "strata/plan/errors.h"
#include "tiny_llama.h"

namespace strata::plan {
namespace {

TEST(ModelDesc, Gpt3ParameterCountByHand) {
  ModelDesc m = modelPreset("gpt3-175b");
  // 96 layers x (12 h^2 + 13 h) + V h + s h + 2h with h = 12288:
  //   96 x 1,812,099,072 = 173,961,510,912
  //   50257 x 12288 = 617,558,016; 2048 x 12288 = 25,165,824; 2h = 24,576
  EXPECT_DOUBLE_EQ(layerParameters(m), 1812099072.0);
  EXPECT_DOUBLE_EQ(parameterCount(m), 174604259328.0);  // the "175B" is 174.6B
}

TEST(ModelDesc, PresetSizesMatchTheirNames) {
  EXPECT_NEAR(parameterCount(modelPreset("gpt2-small")) / 1e6, 124, 1);
  EXPECT_NEAR(parameterCount(modelPreset("gpt2-medium")) / 1e6, 355, 1);
  EXPECT_NEAR(parameterCount(modelPreset("gpt2-large")) / 1e6, 774, 1);
  EXPECT_NEAR(parameterCount(modelPreset("gpt2-xl")) / 1e9, 1.558, 0.001);
  EXPECT_NEAR(parameterCount(modelPreset("gpt3-1.3b")) / 1e9, 1.3, 0.05);
  EXPECT_NEAR(parameterCount(modelPreset("gpt3-6.7b")) / 1e9, 6.7, 0.1);
  EXPECT_NEAR(parameterCount(modelPreset("gpt3-13b")) / 1e9, 12.9, 0.1);
  // Megatron-LM SC21 Table 1 sizes.
  EXPECT_NEAR(parameterCount(modelPreset("megatron-1.7b")) / 1e9, 1.7, 0.06);
  EXPECT_NEAR(parameterCount(modelPreset("megatron-18.4b")) / 1e9, 18.4, 0.05);
  EXPECT_NEAR(parameterCount(modelPreset("megatron-145.6b")) / 1e9, 145.6, 0.05);
  EXPECT_NEAR(parameterCount(modelPreset("megatron-1t")) / 1e9, 1008, 0.5);
}

TEST(ModelDesc, TrainingFlopsEqualMegatronsClosedForm) {
  ModelDesc m = modelPreset("megatron-145.6b");
  double B = 2304, s = m.seqLen, l = m.layers, h = m.hidden, V = m.vocab;
  double withRecompute = 96 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h));
  double without = 72 * B * s * l * h * h * (1 + s / (6 * h) + V / (12 * l * h));
  EXPECT_NEAR(trainingFlops(m, B, true) / withRecompute, 1.0, 1e-12);
  EXPECT_NEAR(trainingFlops(m, B, false) / without, 1.0, 1e-12);
}

TEST(ModelDesc, LayerFlopsByHand) {
  ModelDesc m{"tiny", 2, 8, 2, 32, 16, 4};
  // 2*b*s*(4h^2 + 2hf) + 4*b*s^2*h = 2*1*4*(256 + 512) + 4*16*8 = 6144 + 512
  EXPECT_DOUBLE_EQ(layerForwardFlops(m, 1), 6656);
  EXPECT_DOUBLE_EQ(logitsForwardFlops(m, 1), 2 * 4 * 8 * 16);
  // 6N + 12 l s h, N = 2 x (4*64 + 2*8*32 + 9*8 + 32) + (16*8 + 4*8 + 16)
  double n = 2 * (256 + 512 + 72 + 32) + (128 + 32 + 16);
  EXPECT_DOUBLE_EQ(parameterCount(m), n);
  EXPECT_DOUBLE_EQ(flopsPerToken6N(m), 6 * n + 12 * 2 * 4 * 8);
}

TEST(ModelDesc, UnknownPresetListsTheKnownOnes) {
  try {
    modelPreset("gpt5");
    FAIL();
  } catch (const PlanError& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("'gpt5'"), std::string::npos);
    EXPECT_NE(what.find("gpt3-175b"), std::string::npos);
  }
  ModelDesc bad{"bad", 2, 10, 3, 40, 10, 4};
  EXPECT_THROW(bad.validate(), PlanError);
}

std::string validationError(const ModelDesc& m) {
  try {
    m.validate();
  } catch (const PlanError& e) {
    return e.what();
  }
  return "";
}

TEST(ModelDesc, ValidationNamesTheBadSizes) {
  EXPECT_EQ(validationError({"m", 0, 64, -2, 256, 32, 16}),
            "model 'm' needs positive sizes, got layers 0, heads -2");
  EXPECT_EQ(validationError({"m", 2, 64, 5, 256, 32, 16}),
            "model 'm': 5 heads do not divide hidden size 64");
  EXPECT_EQ(validationError({"m", 2, 64, 4, 256, 32, 16}), "");
}

TEST(ModelDesc, AnUntiedHeadAddsItsOwnWeights) {
  ModelDesc tied = modelPreset("gpt2-small");
  ModelDesc untied = tied;
  untied.tiedEmbeddings = false;
  EXPECT_EQ(headParameters(tied), 0);
  EXPECT_DOUBLE_EQ(parameterCount(untied) - parameterCount(tied), 50257.0 * 768);
}

TEST(ModelDesc, OverridesReplaceSizesAndSayWhichInTheName) {
  ModelDesc small = modelPreset("gpt2-small");
  ModelDesc same = overrideSizes(small, {std::nullopt, 768});
  EXPECT_EQ(same.name, "gpt2-small");
  ModelDesc medium = modelPreset("gpt2-medium");
  ModelDesc grown = overrideSizes(small, {24, 1024, 16, 4096});
  EXPECT_EQ(grown.name, "gpt2-small with layers 24, hidden 1024, heads 16, ffn 4096");
  EXPECT_EQ(parameterCount(grown), parameterCount(medium));
  EXPECT_EQ(overrideSizes(small, {{}, {}, {}, {}, 32000, 2048}).name,
            "gpt2-small with vocab 32000, seq-len 2048");
  EXPECT_THROW(overrideSizes(small, {{}, {}, 7}), PlanError);  // 7 heads, hidden 768
}

// A small llama: hidden 8, 4 heads of d = 2, 2 kv heads (kv = 4), ffn 12.
TEST(ModelDesc, LlamaParametersByHand) {
  ModelDesc m = tinyLlama();
  // q 8x8 = 64, k 8x4 = 32, v 8x4 = 32, o 8x8 = 64; gate 8x12 = 96,
  // up 96, down 12x8 = 96; two RMSNorms of 8: 16. No biases.
  EXPECT_DOUBLE_EQ(layerParameters(m), 64 + 32 + 32 + 64 + 96 + 96 + 96 + 16);
  EXPECT_DOUBLE_EQ(kvProjectionParameters(m), 32 + 32);
  // Token embedding 16x8 = 128 and the final RMSNorm 8; no position table.
  EXPECT_DOUBLE_EQ(embeddingParameters(m), 128 + 8);
  // The untied head, 16x8.
  EXPECT_DOUBLE_EQ(headParameters(m), 128);
  EXPECT_DOUBLE_EQ(parameterCount(m), 2 * 496 + 136 + 128);
}

TEST(ModelDesc, LlamaLayerFlopsByHand) {
  ModelDesc m = tinyLlama();
  // One sequence of 4 tokens; a product of [4 x in] by [in x out] is 2*4*in*out:
  //   q 2*4*8*8 = 512, k 2*4*8*4 = 256, v 256, o 512,
  //   gate 2*4*8*12 = 768, up 768, down 2*4*12*8 = 768,
  //   scores: 4 query heads x [4 x 2] by [2 x 4] = 4 * 2*4*2*4 = 256,
  //   weighted sum: 4 heads x [4 x 4] by [4 x 2] = 256.
  double forward = 512 + 256 + 256 + 512 + 768 + 768 + 768 + 256 + 256;
  EXPECT_DOUBLE_EQ(layerForwardFlops(m, 1), forward);
  EXPECT_DOUBLE_EQ(layerForwardFlops(m, 3), 3 * forward);
  // tp 2 splits the 2 kv heads: half of everything on each rank.
  EXPECT_DOUBLE_EQ(tpRankLayerForwardFlops(m, 1, 2), forward / 2);
  // tp 4 replicates them: each rank computes a quarter of q, o, the MLP
  // and attention, and k and v of its one kv head, 2*4*8*2 = 128 each.
  EXPECT_DOUBLE_EQ(tpRankLayerForwardFlops(m, 1, 4), (512 + 512 + 3 * 768 + 256 + 256) / 4.0 + 256);
  // Training: 3 passes of every layer, and the logits 2*4*8*16 = 1024 three times.
  EXPECT_DOUBLE_EQ(trainingFlops(m, 1, false), 3 * 2 * forward + 3 * 1024);
}

TEST(ModelDesc, GroupedQueryAttentionShrinksOnlyTheKvProjections) {
  ModelDesc gqa = modelPreset("llama3-8b");
  ModelDesc mha = gqa;
  mha.kvHeads = 0;  // as many as the 32 heads
  // k and v shrink from 4096x4096 to 4096x1024 each, in every layer.
  EXPECT_DOUBLE_EQ(layerParameters(mha) - layerParameters(gqa), 2.0 * 4096 * (4096 - 1024));
  EXPECT_DOUBLE_EQ(parameterCount(mha) - parameterCount(gqa), 32 * 2.0 * 4096 * 3072);
  // The FLOPs shrink by those products only: attention's own work is the heads'.
  EXPECT_DOUBLE_EQ(layerForwardFlops(mha, 1) - layerForwardFlops(gqa, 1),
                   2.0 * 8192 * 2 * 4096 * 3072);
}

TEST(ModelDesc, KvProjectionsReplicateWhenTpIsAMultipleOfTheKvHeads) {
  ModelDesc m = modelPreset("llama3-8b");  // 8 kv heads
  EXPECT_FALSE(kvReplicated(m, 8));
  EXPECT_EQ(kvReplicaParameters(m, 8), 0);
  EXPECT_TRUE(kvReplicated(m, 16));
  // Each of 16 ranks holds k and v whole (2 x 4096 x 1024), 15/16 beyond its share.
  EXPECT_DOUBLE_EQ(kvReplicaParameters(m, 16), 2.0 * 4096 * 1024 * 15 / 16);
  EXPECT_FALSE(kvReplicated(modelPreset("gpt3-175b"), 8));
}

TEST(ModelDesc, ArchitecturesAreStrataTrainsNames) {
  EXPECT_EQ(familyOf("llama"), Family::kLlama);
  EXPECT_EQ(familyOf("gpt2"), Family::kGpt);
  EXPECT_EQ(familyOf("strata"), Family::kGpt);
  try {
    familyOf("mamba");
    FAIL();
  } catch (const PlanError& e) {
    EXPECT_EQ(std::string(e.what()),
              "unknown architecture 'mamba'; known architectures: gpt2, llama, strata");
  }
  EXPECT_FALSE(defaultTiedEmbeddings(Family::kLlama));
  EXPECT_TRUE(defaultTiedEmbeddings(Family::kGpt));
}

TEST(ModelDesc, KvHeadsAreValidated) {
  ModelDesc m = tinyLlama();
  m.kvHeads = 3;
  EXPECT_EQ(validationError(m), "model 'tiny-llama': kv-heads 3 do not divide the 4 heads");
  m.kvHeads = -1;
  EXPECT_EQ(validationError(m),
            "model 'tiny-llama': kv-heads -1 is negative (0 means as many as the heads)");
  m.kvHeads = 0;
  EXPECT_EQ(validationError(m), "");
  EXPECT_EQ(m.keyValueHeads(), 4);
  ModelDesc gpt{"g", 2, 64, 4, 256, 32, 16};
  gpt.kvHeads = 2;
  EXPECT_EQ(validationError(gpt),
            "model 'g': kv-heads 2 differ from the 4 heads, which only architecture llama allows");
  gpt.kvHeads = 4;
  EXPECT_EQ(validationError(gpt), "");
  ModelDesc odd = tinyLlama();
  odd.hidden = 12;  // 4 heads of 3
  EXPECT_EQ(validationError(odd),
            "model 'tiny-llama': llama's rotary embeddings rotate pairs, but hidden 12 / 4 heads = "
            "head dim 3 is odd");
}

TEST(ModelDesc, OverridesChangeTheFamilyAndKvHeads) {
  ModelOverrides toLlama;
  toLlama.architecture = "llama";
  toLlama.kvHeads = 4;
  ModelDesc m = overrideSizes(modelPreset("gpt2-small"), toLlama);
  EXPECT_EQ(m.name, "gpt2-small with kv-heads 4, architecture llama");
  EXPECT_EQ(m.family, Family::kLlama);
  EXPECT_FALSE(m.tiedEmbeddings);  // llama's default
  EXPECT_EQ(m.keyValueHeads(), 4);
  ModelOverrides same;
  same.architecture = "llama";
  EXPECT_EQ(overrideSizes(modelPreset("llama3-8b"), same).name, "llama3-8b");
  ModelOverrides unknown;
  unknown.architecture = "mamba";
  EXPECT_THROW(overrideSizes(modelPreset("llama3-8b"), unknown), PlanError);
}

}  // namespace
}  // namespace strata::plan
