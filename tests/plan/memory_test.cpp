#include "strata/plan/memory.h"

#include <gtest/gtest.h>

#include "tiny_llama.h"

namespace strata::plan {
namespace {

TEST(Memory, ZeroStagesShardStateAsDocumented) {
  Precision bf16;  // 2 + 2 + 12 bytes per parameter
  double p = 1e9;
  int dp = 8;
  MemoryBreakdown z0 = modelStateBytes(p, dp, 0, bf16);
  EXPECT_DOUBLE_EQ(z0.total(), 16e9);
  // ZeRO-1 and 2 keep a flat copy of the weights (2e9) for the sharded step.
  MemoryBreakdown z1 = modelStateBytes(p, dp, 1, bf16);
  EXPECT_DOUBLE_EQ(z1.total(), 4e9 + 12e9 / 8 + 2e9);
  // ZeRO-2 also keeps its averaged chunks beside the whole flat gradient.
  MemoryBreakdown z2 = modelStateBytes(p, dp, 2, bf16);
  EXPECT_DOUBLE_EQ(z2.total(), 4e9 + 14e9 / 8 + 2e9);
  MemoryBreakdown z3 = modelStateBytes(p, dp, 3, bf16);
  EXPECT_DOUBLE_EQ(z3.total(), 16e9 / 8);
  EXPECT_DOUBLE_EQ(z3.parameters, 2e9 / 8);
}

// Strata's GPT layer keeps Korthikanti et al.'s tensors, its dropout masks
// as values like the rest: 16-bit, sbh(34 + 5as/h) with one-byte masks
// becomes sbh(36 + 6as/h), plus the LayerNorms' fp32 statistics (16 bytes
// a token) and the bool causal mask [s, s].
TEST(Memory, GptKeepsKorthikantisTensorsWithFloatMasks) {
  ModelDesc m = modelPreset("gpt3-175b");
  double s = 2048, h = 12288, a = 96;
  EXPECT_DOUBLE_EQ(workingActivationBytes(m, 1, 1, false),
                   s * h * (36 + 6 * a * s / h) + 16 * s + s * s);
  // Tensor parallel 8 splits the projections, the MLP and the heads:
  // 4h + 2h whole (the residual stream and the masks), 12h/8 and 3as/8 split.
  EXPECT_DOUBLE_EQ(workingActivationBytes(m, 1, 8, false),
                   s * h * (12 + 24.0 / 8 + 6 * a * s / (8 * h)) + 16 * s + s * s);
  // Sequence parallel splits the two sums and the norms' outputs, but the
  // gathered inputs of the attention and the MLP stay whole, as do the
  // masks: 2h + 2h/8 + 2h + 12h/8 values a token.
  EXPECT_DOUBLE_EQ(workingActivationBytes(m, 1, 8, true),
                   s * h * (8 + 28.0 / 8 + 6 * a * s / (8 * h)) + 2 * s + s * s);
  // Without dropout: no masks.
  m.dropout = false;
  EXPECT_DOUBLE_EQ(workingActivationBytes(m, 1, 1, false),
                   s * h * (32 + 2 * a * s / h) + 16 * s + s * s);
  // Per-layer recompute keeps only the 16-bit layer input.
  EXPECT_DOUBLE_EQ(stashedActivationBytes(m, 2, 8, false, true), 2 * s * 2 * h);
  EXPECT_DOUBLE_EQ(stashedActivationBytes(m, 2, 8, true, true), 2 * s * 2 * h / 8);
  EXPECT_DOUBLE_EQ(stashedActivationBytes(m, 2, 8, true, false),
                   workingActivationBytes(m, 2, 8, true));
  // fp32 values double every value, not the statistics or the mask.
  EXPECT_DOUBLE_EQ(
      workingActivationBytes(m, 1, 1, false, 1, CpAlgorithm::kRing, LayerKind::kDense, 4),
      s * h * (64 + 4 * a * s / h) + 16 * s + s * s);
}

// A small llama: s 4, hidden 8, 4 heads of d = 2, 2 kv heads (kv = 4), ffn 12.
TEST(Memory, LlamaActivationsByHand) {
  ModelDesc m = tinyLlama();
  // One sequence of 4 tokens, 2-byte values, no tensor parallelism; a token:
  //   the block's two sums, in fp32 whatever the values [8]: 2 * 4*8, and
  //   each RMSNorm's x/rms and output [8]: 4 * 2*8; together         = 128
  //   rotated Q, K and V expanded to the 4 query heads, o's input [8]:    4 * 2*8 =  64
  //   gate, up and product [12] (ops::swiglu keeps no silu(gate)):        3 * 2*12 = 72
  //   the fused attention kernel's output [8]:                            2*8      = 16
  //   its fp32 log-sum-exp, 4 heads:                                      4 * 4    = 16
  //   the norms' fp32 1/rms:                                              2 * 4    =  8
  // 304 bytes a token, 1216 for 4 (no [s, s] probabilities and no causal
  // mask: the kernel keeps neither); and RoPE's cos and sin [4 x 2] (32) and
  // the repeat's int64 indices, 4 for k and 4 for v (64).
  EXPECT_DOUBLE_EQ(workingActivationBytes(m, 1, 1, false), 1216 + 32 + 64);
  EXPECT_DOUBLE_EQ(workingActivationBytes(m, 3, 1, false), 3 * 1216 + 32 + 64);
  // tp 2 splits the heads, the kv heads and ffn; the residual stream stays
  // whole: 128 + 32 + 36 + 8 + 8 + 8 = 220 a token; 2 query heads repeat 1
  // kv head.
  EXPECT_DOUBLE_EQ(workingActivationBytes(m, 1, 2, false), 4 * 220 + 32 + 32);
  // tp 4 replicates the kv heads: each rank has one query head and one kv
  // head, nothing to repeat: 128 + 16 + 18 + 4 + 4 + 8 = 178.
  EXPECT_DOUBLE_EQ(workingActivationBytes(m, 1, 4, false), 4 * 178 + 32);
  // Sequence parallel splits the fp32 sums and the norms' x/rms, (2 x 4*8 +
  // 2 x 2*8) / 4, but keeps the attention's and the MLP's gathered inputs whole, 2 x
  // 2*8; the statistics split too: 24 + 32 + 16 + 18 + 4 + 4 + 2 = 100.
  EXPECT_DOUBLE_EQ(workingActivationBytes(m, 1, 4, true), 4 * 100 + 32);
  // Per-layer recompute keeps the 16-bit layer input, as for GPT.
  EXPECT_DOUBLE_EQ(stashedActivationBytes(m, 1, 4, false, true), 2 * 4 * 8);
  EXPECT_DOUBLE_EQ(stashedActivationBytes(m, 1, 4, true, true), 2 * 4 * 8 / 4);
}

// The trainer expands K and V to every query head before attention, so
// grouped-query attention keeps as much as multi-head attention but for the
// repeat's int64 indices (one a query head of the rank, for k and for v).
TEST(Memory, GroupedQueryAttentionKeepsExpandedKAndV) {
  ModelDesc gqa = modelPreset("llama3-8b");  // 8 kv heads of 128: kv width 1024
  ModelDesc mha = gqa;
  mha.kvHeads = 32;
  EXPECT_DOUBLE_EQ(
      workingActivationBytes(gqa, 1, 8, true) - workingActivationBytes(mha, 1, 8, true), 2 * 8 * 4);
  EXPECT_DOUBLE_EQ(
      workingActivationBytes(gqa, 1, 1, false) - workingActivationBytes(mha, 1, 1, false),
      2 * 8 * 32);
}

}  // namespace
}  // namespace strata::plan
