// Parallel equals serial under context parallelism: the Trainer with every
// sequence split over cp ranks (load-balanced chunks, ring or all-to-all
// attention) trains exactly what the independent reference trains on whole
// sequences: every step's loss and gradient norm, the validation loss and
// every parameter shard (reference_comparison.h states the tolerance).
//
// The layouts the issue of context parallelism names: cp 2 alone, cp 2 x
// tp 2, pp 2 x cp 2 x dp 2 with 1F1B, cp 2 with ZeRO-3, cp 4 all-to-all, and
// the Llama family (rotary positions of each token's global position,
// grouped-query kv heads on the ring and in the all-to-all); besides,
// sequence parallel inside cp, ZeRO-2 chunks over dp x cp, and activation
// checkpointing (the ring runs again in the recomputed forward).
#include <gtest/gtest.h>

#include "reference_comparison.h"
#include "trainer_test_util.h"

namespace strata::train::testing {
namespace {

TrainConfig withCp(TrainConfig c, int64_t pp, int64_t dp, int64_t cp, int64_t tp,
                   const std::string& algorithm = "ring") {
  c.parallel.pp = pp;
  c.parallel.dp = dp;
  c.parallel.cp = cp;
  c.parallel.tp = tp;
  c.parallel.cpAlgorithm = algorithm;
  return c;
}

TEST(ContextParallelEqualsReference, Cp2Ring) {
  expectEqualsReference("cp2", withCp(tinyConfig(), 1, 1, 2, 1));
}

TEST(ContextParallelEqualsReference, Cp2Tp2Ring) {
  expectEqualsReference("cp2tp2", withCp(tinyConfig(), 1, 1, 2, 2));
}

TEST(ContextParallelEqualsReference, Pp2Cp2Dp2OneFOneB) {
  expectEqualsReference("pp2cp2dp2", withCp(tinyConfig(), 2, 2, 2, 1));
}

// The parameters sharded over the four ranks of dp 2 x cp 2.
TEST(ContextParallelEqualsReference, Dp2Cp2Zero3) {
  TrainConfig config = withCp(tinyConfig(), 1, 2, 2, 1);
  config.parallel.zero = 3;
  expectEqualsReference("dp2cp2zero3", config);
}

// Gradient chunks over dp x cp, measured chunk by chunk for clipping.
TEST(ContextParallelEqualsReference, Dp2Cp2Zero2) {
  TrainConfig config = withCp(tinyConfig(), 1, 2, 2, 1);
  config.parallel.zero = 2;
  expectEqualsReference("dp2cp2zero2", config);
}

TEST(ContextParallelEqualsReference, Cp4AllToAll) {
  expectEqualsReference("cp4a2a", withCp(tinyConfig(), 1, 1, 4, 1, "all-to-all"));
}

// Each cp rank's 8 tokens split again over tp 2 outside attention.
TEST(ContextParallelEqualsReference, Cp2Tp2SequenceParallel) {
  TrainConfig config = withCp(tinyConfig(), 1, 1, 2, 2);
  config.parallel.sequenceParallel = true;
  expectEqualsReference("cp2tp2sp", config);
}

TEST(ContextParallelEqualsReference, Pp2Cp2CheckpointedActivations) {
  TrainConfig config = withCp(tinyConfig(), 2, 1, 2, 1);
  config.parallel.checkpointActivations = true;
  expectEqualsReference("pp2cp2ckpt", config);
}

TEST(ContextParallelEqualsReference, LlamaCp2RingGroupedQuery) {
  expectEqualsReference("llama_cp2", withCp(tinyLlamaConfig(2), 1, 1, 2, 1));
}

TEST(ContextParallelEqualsReference, LlamaCp2AllToAllGroupedQuery) {
  expectEqualsReference("llama_cp2a2a", withCp(tinyLlamaConfig(2), 1, 1, 2, 1, "all-to-all"));
}

// Llama 3.1's rotary scaling at an original context of 512 (head dimension
// 8: one frequency kept, one blended, two slowed), on each cp rank's global
// positions.
TEST(ContextParallelEqualsReference, LlamaCp2RingRopeScaled) {
  TrainConfig config = withCp(tinyLlamaConfig(2), 1, 1, 2, 1);
  config.model.ropeScaling.type = "llama3";
  config.model.ropeScaling.originalContext = 512;
  expectEqualsReference("llama_cp2_scaled", config);
}

// The one kv head replicated over tp 2, on the ring of cp 2, in a pipeline.
TEST(ContextParallelEqualsReference, LlamaPp2Cp2Tp2MultiQuery) {
  expectEqualsReference("llama_pp2cp2tp2", withCp(tinyLlamaConfig(1), 2, 1, 2, 2));
}

}  // namespace
}  // namespace strata::train::testing
