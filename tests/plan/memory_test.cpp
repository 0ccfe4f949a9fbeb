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

}  // namespace
}  // namespace strata::plan
