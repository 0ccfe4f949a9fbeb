// The zero-bubble V schedules in the trainer equal the independent
// reference (reference_training.h, plain LibTorch) like every other layout:
// the model is cut into 2 x pp stages and rank r runs stages r and
// 2pp-1-r, so rank 0 holds the embedding and the head (a tied weight is one
// tensor used twice there) and the hand-off between the V's arms stays on
// rank pp-1. ZB-V splits backward into input- and weight-gradient passes;
// DualPipeV issues one micro-batch's forward with another's backward.
#include <gtest/gtest.h>

#include <algorithm>

#include "reference_comparison.h"
#include "trainer_test_util.h"

namespace strata::train::testing {
namespace {

TrainConfig inAV(TrainConfig c, int64_t pp, int64_t dp, const std::string& schedule) {
  c.parallel.pp = pp;
  c.parallel.dp = dp;
  c.parallel.schedule = schedule;
  // 2 x pp stages, each with a layer at least (validate_config.h).
  c.model.layers = std::max<int64_t>(c.model.layers, 2 * pp);
  // Micro-batches per replica: 4 at pp 2, 8 at pp 4 (DualPipeV needs 2 x pp).
  c.train.microBatch = 1;
  c.train.globalBatch = 2 * pp * dp;
  return c;
}

// The tied embedding and head both on rank 0; data parallelism's buckets
// reduce as the last weight gradients come.
TEST(VScheduleEqualsReference, Pp2Dp2ZbVTied) {
  expectEqualsReference("zbv_pp2dp2", inAV(tinyConfig(), 2, 2, "zb-v"));
}

TEST(VScheduleEqualsReference, Pp4Dp2ZbV) {
  expectEqualsReference("zbv_pp4dp2", inAV(tinyConfig(), 4, 2, "zb-v"));
}

// The Llama family, untied: the head is a weight of its own on rank 0.
TEST(VScheduleEqualsReference, LlamaPp4Dp2DualPipeV) {
  expectEqualsReference("dpv_pp4dp2", inAV(tinyLlamaConfig(2), 4, 2, "dualpipe-v"));
}

// With tp, sequence parallel, ZeRO-2's chunked gradients and recompute.
TEST(VScheduleEqualsReference, Pp2Dp2Tp2ZbVZero2Checkpointed) {
  TrainConfig config = inAV(tinyConfig(), 2, 2, "zb-v");
  config.parallel.tp = 2;
  config.parallel.sequenceParallel = true;
  config.parallel.zero = 2;
  config.parallel.checkpointActivations = true;
  expectEqualsReference("zbv_pp2dp2tp2z2", config);
}

TEST(VScheduleEqualsReference, Pp2Dp2ZbVZero1) {
  TrainConfig config = inAV(tinyLlamaConfig(2), 2, 2, "zb-v");
  config.parallel.zero = 1;
  expectEqualsReference("zbv_pp2dp2z1", config);
}

// ZeRO-3: rank 0's tied unit is gathered for the embedding and the head.
TEST(VScheduleEqualsReference, Pp2Dp2DualPipeVZero3Tied) {
  TrainConfig config = inAV(tinyConfig(), 2, 2, "dualpipe-v");
  config.parallel.zero = 3;
  expectEqualsReference("dpv_pp2dp2z3", config);
}

}  // namespace
}  // namespace strata::train::testing
