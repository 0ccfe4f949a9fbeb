#include "strata/plan/memory.h"

#include <gtest/gtest.h>

namespace strata::plan {
namespace {

TEST(Memory, ZeroStagesShardStateAsDocumented) {
  Precision bf16;  // 2 + 2 + 12 bytes per parameter
  double p = 1e9;
  int dp = 8;
  MemoryBreakdown z0 = modelStateBytes(p, dp, 0, bf16);
  EXPECT_DOUBLE_EQ(z0.total(), 16e9);
  MemoryBreakdown z1 = modelStateBytes(p, dp, 1, bf16);
  EXPECT_DOUBLE_EQ(z1.total(), 4e9 + 12e9 / 8);
  MemoryBreakdown z2 = modelStateBytes(p, dp, 2, bf16);
  EXPECT_DOUBLE_EQ(z2.total(), 2e9 + 14e9 / 8);
  MemoryBreakdown z3 = modelStateBytes(p, dp, 3, bf16);
  EXPECT_DOUBLE_EQ(z3.total(), 16e9 / 8);
  EXPECT_DOUBLE_EQ(z3.parameters, 2e9 / 8);
}

TEST(Memory, KorthikantiActivationFormulas) {
  ModelDesc m = modelPreset("gpt3-175b");
  double s = 2048, b = 1, h = 12288, a = 96;
  // No parallelism: sbh(34 + 5as/h).
  EXPECT_DOUBLE_EQ(workingActivationBytes(m, 1, 1, false), s * b * h * (34 + 5 * a * s / h));
  // Tensor parallel 8: sbh(10 + 24/8 + 5as/(8h)).
  EXPECT_DOUBLE_EQ(workingActivationBytes(m, 1, 8, false),
                   s * b * h * (10 + 3 + 5 * a * s / (8 * h)));
  // With sequence parallel the whole sbh(34 + 5as/h) divides by t.
  EXPECT_DOUBLE_EQ(workingActivationBytes(m, 1, 8, true), s * b * h * (34 + 5 * a * s / h) / 8);
  // Full recompute keeps only the 16-bit layer input.
  EXPECT_DOUBLE_EQ(stashedActivationBytes(m, 2, 8, false, true), 2 * s * 2 * h);
  EXPECT_DOUBLE_EQ(stashedActivationBytes(m, 2, 8, true, true), 2 * s * 2 * h / 8);
  EXPECT_DOUBLE_EQ(stashedActivationBytes(m, 2, 8, true, false),
                   workingActivationBytes(m, 2, 8, true));
}

// A small llama: s 4, hidden 8, 4 heads of d = 2, 2 kv heads (kv = 4), ffn 12.
ModelDesc tinyLlama() {
  ModelDesc m{"tiny-llama", 2, 8, 4, 12, 16, 4, false};
  m.family = Family::kLlama;
  m.kvHeads = 2;
  return m;
}

TEST(Memory, LlamaActivationsByHand) {
  ModelDesc m = tinyLlama();
  // One sequence of 4 tokens, 2-byte values, no tensor parallelism:
  //   two RMSNorm inputs and their outputs, 4 x [4 x 8]:  4 * 2*4*8  = 256
  //   rotated Q [4 x 8], the o projection's input [4 x 8]: 2 * 2*4*8 = 128
  //   rotated K and V expanded to the 4 query heads [4 x 8]: 2 * 2*4*8 = 128
  //   gate, SiLU, up and product [4 x 12]:                 4 * 2*4*12 = 384
  //   the softmax's probabilities, 4 heads x [4 x 4]:      2*4*4*4    = 128
  EXPECT_DOUBLE_EQ(workingActivationBytes(m, 1, 1, false), 256 + 128 + 128 + 384 + 128);
  EXPECT_DOUBLE_EQ(workingActivationBytes(m, 3, 1, false), 3 * 1024);
  // tp 2 splits the heads, the kv heads and ffn; the norms' four stay whole.
  EXPECT_DOUBLE_EQ(workingActivationBytes(m, 1, 2, false), 256 + 64 + 64 + 192 + 64);
  // tp 4 replicates the kv heads: each rank expands its one kv head to its
  // one query head, K and V [4 x 2].
  EXPECT_DOUBLE_EQ(workingActivationBytes(m, 1, 4, false), 256 + 32 + 2 * 2 * 4 * 2 + 96 + 32);
  // Sequence parallel splits the norms' four too.
  EXPECT_DOUBLE_EQ(workingActivationBytes(m, 1, 4, true), 64 + 32 + 32 + 96 + 32);
  // Full recompute keeps the 16-bit layer input, as for GPT.
  EXPECT_DOUBLE_EQ(stashedActivationBytes(m, 1, 4, false, true), 2 * 4 * 8);
  EXPECT_DOUBLE_EQ(stashedActivationBytes(m, 1, 4, true, true), 2 * 4 * 8 / 4);
}

// The trainer expands K and V to every query head before attention, so
// grouped-query attention keeps as much as multi-head attention.
TEST(Memory, GroupedQueryAttentionKeepsExpandedKAndV) {
  ModelDesc gqa = modelPreset("llama3-8b");  // 8 kv heads of 128: kv width 1024
  ModelDesc mha = gqa;
  mha.kvHeads = 32;
  EXPECT_DOUBLE_EQ(workingActivationBytes(mha, 1, 8, true),
                   workingActivationBytes(gqa, 1, 8, true));
  EXPECT_DOUBLE_EQ(workingActivationBytes(mha, 1, 1, false),
                   workingActivationBytes(gqa, 1, 1, false));
}

}  // namespace
}  // namespace strata::plan
