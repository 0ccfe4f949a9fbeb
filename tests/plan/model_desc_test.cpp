#include "strata/plan/model_desc.h"

#include <gtest/gtest.h>

#include "strata/plan/errors.h"

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

}  // namespace
}  // namespace strata::plan
