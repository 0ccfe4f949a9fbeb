// Parallel equals serial for mixture-of-experts models: the Trainer with a
// Llama (or GPT) whose blocks 1 and 3 are MoE MLPs (4 experts, top 2) trains exactly
// what the independent reference (tests/support/reference_moe.h: every
// expert on exactly its tokens, in one process) trains: every step's loss
// and gradient norm, the validation loss and every parameter shard
// (reference_comparison.h states the tolerance). The routing losses enter
// both: the reference differentiates loss + aux + z.
//
// Layouts: one process; dp 2 with the experts on every rank (ep 1); ep 2;
// ep 4 with dp 4; ep 2 x tp 2; pp 2 x ep 2; ep 2 under ZeRO-1, 2 and 3;
// capacity drops with a shared expert; experts no token chose; cp 2 with ep 2 (the balance loss and
// the capacity taken over whole sequences); recomputed activations; the GPT
// family at ep 2 with dropout and at pp 2 x dp 2 x tp 2 x ep 2.
#include <gtest/gtest.h>

#include "reference_comparison.h"
#include "trainer_test_util.h"

namespace strata::train::testing {
namespace {

TrainConfig moeConfig(int64_t pp, int64_t dp, int64_t tp, int64_t ep) {
  TrainConfig c = tinyMoeConfig();
  c.parallel.pp = pp;
  c.parallel.dp = dp;
  c.parallel.tp = tp;
  c.parallel.ep = ep;
  return c;
}

TEST(MoeEqualsReference, OneProcess) { expectEqualsReference("moe1", moeConfig(1, 1, 1, 1)); }

TEST(MoeEqualsReference, Dp2ExpertsOnEveryRank) {
  expectEqualsReference("moe_dp2", moeConfig(1, 2, 1, 1));
}

TEST(MoeEqualsReference, Ep2) { expectEqualsReference("moe_ep2", moeConfig(1, 2, 1, 2)); }

TEST(MoeEqualsReference, Ep4Dp4) { expectEqualsReference("moe_ep4", moeConfig(1, 4, 1, 4)); }

TEST(MoeEqualsReference, Ep2Tp2) { expectEqualsReference("moe_ep2tp2", moeConfig(1, 2, 2, 2)); }

TEST(MoeEqualsReference, Pp2Ep2) { expectEqualsReference("moe_pp2ep2", moeConfig(2, 2, 1, 2)); }

TEST(MoeEqualsReference, Ep2Zero1) {
  TrainConfig c = moeConfig(1, 2, 1, 2);
  c.parallel.zero = 1;
  expectEqualsReference("moe_ep2zero1", c);
}

// The experts' gradient chunks cut over their own replicas (dp 4 / ep 2).
TEST(MoeEqualsReference, Ep2Dp4Zero2) {
  TrainConfig c = moeConfig(1, 4, 1, 2);
  c.parallel.zero = 2;
  expectEqualsReference("moe_ep2zero2", c);
}

// ZeRO-3: the experts' units sharded over their own replicas (dp 4 / ep 2),
// the rest over dp 4, gathered together around each layer.
TEST(MoeEqualsReference, Ep2Dp4Zero3) {
  TrainConfig c = moeConfig(1, 4, 1, 2);
  c.parallel.zero = 3;
  expectEqualsReference("moe_ep2zero3", c);
}

// Capacity 0.5 drops tokens every step; a shared expert sees every token.
TEST(MoeEqualsReference, Ep2CapacityDropsWithASharedExpert) {
  TrainConfig c = moeConfig(1, 2, 1, 2);
  c.model.moe.capacityFactor = 0.5;
  c.model.moe.sharedExperts = 1;
  expectEqualsReference("moe_ep2cap", c);
}

// ep 2 over the cp 2 ranks of each sequence, with capacity.
TEST(MoeEqualsReference, Cp2Ep2Capacity) {
  TrainConfig c = moeConfig(1, 1, 1, 2);
  c.parallel.cp = 2;
  c.model.moe.capacityFactor = 0.75;
  expectEqualsReference("moe_cp2ep2", c);
}

// 8 sequences of 2 tokens, top 1 of 8 experts: most steps leave an expert
// without tokens. It still runs (on no rows), so its gradient is zero and
// AdamW steps it, as every expert is stepped in the reference.
TEST(MoeEqualsReference, AnExpertNoTokenChoseIsStillStepped) {
  TrainConfig c = moeConfig(1, 1, 1, 1);
  c.model.moe.experts = 8;
  c.model.moe.topK = 1;
  c.train.microBatch = 8;
  c.train.seqLen = 2;
  expectEqualsReference("moe_idle_expert", c);
}

// The GPT family with MoE blocks 1 and 3 (SwiGLU experts in place of the
// GELU MLP), its residual dropout after the experts as after a dense MLP.
TrainConfig gptMoeConfig(int64_t pp, int64_t dp, int64_t tp, int64_t ep) {
  TrainConfig c = tinyConfig();
  c.model.moe = tinyMoeConfig().model.moe;
  c.parallel.pp = pp;
  c.parallel.dp = dp;
  c.parallel.tp = tp;
  c.parallel.ep = ep;
  return c;
}

TEST(MoeEqualsReference, GptEp2WithDropout) {
  TrainConfig c = gptMoeConfig(1, 2, 1, 2);
  c.model.dropout = 0.1;
  expectEqualsReference("moe_gpt_ep2", c);
}

TEST(MoeEqualsReference, GptPp2Dp2Tp2Ep2) {
  expectEqualsReference("moe_gpt_pp2tp2ep2", gptMoeConfig(2, 2, 2, 2));
}

// A measured cut times the first dense and the first MoE block in place of
// the others of their kind (models::blockStandIns), its experts exchanging
// tokens over ep 2 as in training.
TEST(MoeEqualsReference, GptPp2Dp2Ep2BalancedCut) {
  TrainConfig c = gptMoeConfig(2, 2, 1, 2);
  c.parallel.partition = "balanced";
  expectEqualsReference("moe_gpt_pp2ep2balanced", c);
}

TEST(MoeEqualsReference, Pp2Ep2CheckpointedActivations) {
  TrainConfig c = moeConfig(2, 2, 1, 2);
  c.parallel.checkpointActivations = true;
  expectEqualsReference("moe_pp2ep2ckpt", c);
}

// The step's routing report on every rank: each token's top_k assignments
// counted once over the replicas and both pipeline stages (8 sequences of 16
// tokens, top 2 of 4 experts: a mean of 64 per expert and layer), nothing
// dropped without a capacity, a balance loss near its balanced value of 1.
TEST(MoeReport, CountsEveryAssignmentOnceOverReplicasAndStages) {
  strata::testing::runInProcesses(4, [](const strata::testing::RankContext&) {
    Trainer trainer(moeConfig(2, 2, 1, 2), World::init());
    StepReport step = trainer.step();
    ASSERT_TRUE(step.moe.present);
    EXPECT_DOUBLE_EQ(step.moe.tokensMean, 8 * 16 * 2 / 4.0);
    EXPECT_LE(step.moe.tokensMin, step.moe.tokensMean);
    EXPECT_GE(step.moe.tokensMax, step.moe.tokensMean);
    EXPECT_EQ(step.moe.dropped, 0);
    EXPECT_NEAR(step.moe.auxLoss, 1.0, 0.5);
    EXPECT_GT(step.moe.exchangeSeconds, 0);
  });
}

}  // namespace
}  // namespace strata::train::testing
