// The planner with the V schedules (zb-v, dualpipe-v): 2 pp stages on pp
// ranks in a V, rank 0 holding the first and the last stage.
#include <gtest/gtest.h>

#include "round_job.h"
#include "strata/plan/search.h"
#include "strata/schedule/registry.h"
#include "strata/schedule/simulator.h"

namespace strata::plan {
namespace {

// The round job of 8 layers on `devices` devices of one node, its hand-offs
// free and its vocabulary one token, so that a pipeline's time is its
// stages' work and idling alone, and its stages are all but equal (the
// logits add 1e-4 of a layer to the last).
TrainingJob freeHandOffs(int devices, int batch) {
  TrainingJob job = roundJob(1, devices, batch);
  job.cluster.intraNode.bandwidth = 1e30;
  job.model.vocab = 1;
  return job;
}

TEST(VSchedules, LayoutNamesThemAndPlacesTheirStagesInAV) {
  Layout zbv = parseLayout("pp4,zb-v");
  EXPECT_EQ(toString(zbv), "pp4,tp1,dp1,mb1,v1,zb-v,zero0");
  EXPECT_EQ(parseLayout("pp4,dualpipe-v").schedule, "dualpipe-v");
  EXPECT_TRUE(isVSchedule(zbv));
  EXPECT_FALSE(isVSchedule(parseLayout("pp4,zb-h1")));
  EXPECT_EQ(pipelineStages(zbv), 8);
  EXPECT_EQ(stageRanks(zbv), (std::vector<int>{0, 1, 2, 3, 3, 2, 1, 0}));
  EXPECT_EQ(stageRanks(parseLayout("pp2,v2,interleaved-1f1b")), (std::vector<int>{0, 1, 0, 1}));
}

TEST(VSchedules, RulesNameTheValues) {
  TrainingJob job = roundJob(1, 4, 6);
  EXPECT_EQ(checkLayout(job, parseLayout("pp4,dualpipe-v")),
            "dualpipe-v needs at least 2 x pp = 8 micro-batches per pipeline, but the batch gives "
            "6 (global batch / (mb x dp)); use zb-v, a larger batch or a smaller mb or dp");
  EXPECT_EQ(checkLayout(job, parseLayout("pp4,zb-v")), "");
  EXPECT_EQ(checkLayout(job, parseLayout("pp4,v2,zb-v")),
            "schedule zb-v places two stages per rank in a V and takes no virtual stages, but v "
            "is 2 (use v1)");
  TrainingJob wide = roundJob(1, 8, 16);
  EXPECT_EQ(checkLayout(wide, parseLayout("pp8,zb-v")),
            "8 layers cannot fill 2 x pp 8 (zb-v) = 16 stages of at least one layer");
  EXPECT_EQ(checkLayout(roundJob(1, 4, 8), parseLayout("pp4,dualpipe-v")), "");
}

// 1F1B on p = 4 ranks with F = f and B = 2f a stage idles (p - 1)(F + B) =
// 9f. ZB-V cuts the same model into 8 stages of half the work: F = I = W =
// f/2 (Strata's W runs only the weight-gradient products, stage_costs.cpp).
// The planner's ZB-V bubble must be the simulator's on those costs: a sixth
// of 1F1B's here, as docs/schedules.md gives. Under ZeRO-3 W walks the
// stage's backward again (W = f): 0.28 of 1F1B's, and the re-walk counted.
TEST(VSchedules, ZbVBubbleIsTheSimulatorsOnHalfStages) {
  const int p = 4, m = 16;
  TrainingJob job = freeHandOffs(p, m);
  Estimate oneF = evaluateLayout(job, parseLayout("pp4,1f1b"));
  Estimate zbv = evaluateLayout(job, parseLayout("pp4,zb-v"));
  double f = oneF.time.compute / (3 * m);
  EXPECT_NEAR(oneF.time.bubble, 3 * (p - 1) * f, 1e-3 * f);
  schedule::CostModel half;
  half.uniform = {f / 2, f, f / 2, f / 2};
  schedule::SimulationResult sim = schedule::simulate(schedule::generate("zb-v", {p, m}), half);
  EXPECT_NEAR(zbv.time.bubble, sim.ranks[0].idle, 1e-2 * f);
  EXPECT_NEAR(zbv.time.bubble / oneF.time.bubble, 1.0 / 6, 0.01);
  EXPECT_DOUBLE_EQ(zbv.time.compute, oneF.time.compute);
  EXPECT_DOUBLE_EQ(zbv.time.recompute, 0);
  EXPECT_NEAR(zbv.iterationSeconds, zbv.time.total(), 1e-9 * zbv.iterationSeconds);

  Estimate oneFZero3 = evaluateLayout(job, parseLayout("pp4,1f1b,zero3"));
  Estimate zbvZero3 = evaluateLayout(job, parseLayout("pp4,zb-v,zero3"));
  EXPECT_NEAR(zbvZero3.time.bubble / oneFZero3.time.bubble, 0.28, 0.01);
  EXPECT_GT(zbvZero3.time.recompute, 0);
}

TEST(VSchedules, ZbVKeepsOneFOneBsActivationsAndSendsTwiceTheMessages) {
  const int p = 4, m = 16;
  TrainingJob job = freeHandOffs(p, m);
  Estimate oneF = evaluateLayout(job, parseLayout("pp4,1f1b"));
  Estimate zbv = evaluateLayout(job, parseLayout("pp4,zb-v"));
  Estimate dual = evaluateLayout(job, parseLayout("pp4,dualpipe-v"));
  EXPECT_EQ(oneF.pipelineMessages, 2 * m * (p - 1));
  EXPECT_EQ(zbv.pipelineMessages, 4 * m * (p - 1));
  EXPECT_EQ(dual.pipelineMessages, 4 * m * (p - 1));
  // 2p half stages are p whole ones; DualPipeV holds one half stage more
  // (the vocabulary of 1 makes the head's part negligible), and at its
  // peak, like ZB-V, an I's gradients for its W. ZB-V's split backwards
  // keep, from each I to its W, the gradients W needs (memory.h): more than
  // 1F1B's whole backwards hold, less than a stage's stash.
  EXPECT_EQ(zbv.peakStash, 2 * p);
  EXPECT_GT(zbv.memory.activations, oneF.memory.activations);
  EXPECT_LT(zbv.memory.activations - oneF.memory.activations, oneF.memory.activations / p);
  EXPECT_EQ(dual.peakStash, 2 * p + 1);
  double extraHalfStage = oneF.memory.activations / (2 * p);
  EXPECT_GE(dual.memory.activations, oneF.memory.activations + extraHalfStage);
  EXPECT_LT(dual.memory.activations - oneF.memory.activations - extraHalfStage,
            zbv.memory.activations - oneF.memory.activations);
}

// A vocabulary large enough that the embedding and the head outweigh the
// layers: rank 0 holds both under the V, one of them under 1F1B.
TEST(VSchedules, RankZeroHoldsTheEmbeddingAndTheHead) {
  TrainingJob job = roundJob(1, 4, 8);
  job.model.family = Family::kLlama;
  job.model.tiedEmbeddings = false;
  job.model.vocab = 65536;
  // Sequences long enough that rank 0's peak falls in the backward, with its
  // activations held, not at the optimizer's step.
  job.model.seqLen = 2048;
  const ModelDesc& m = job.model;
  double layers = 2 * layerParameters(m);  // two stages of one layer each
  Estimate zbv = evaluateLayout(job, parseLayout("pp4,zb-v"));
  EXPECT_DOUBLE_EQ(zbv.memory.parameters,
                   2 * (layers + embeddingParameters(m) + headParameters(m)));
  Estimate oneF = evaluateLayout(job, parseLayout("pp4,1f1b"));
  EXPECT_LT(oneF.memory.parameters, 2 * (layers + embeddingParameters(m)) + 1);
  // The head's kept gradients sit on rank 0 too, with its activations.
  EXPECT_GT(zbv.memory.activations, oneF.memory.activations);
  // Every rank's memory is listed; rank 0's is the estimate's.
  ASSERT_EQ(zbv.rankMemory.size(), 4u);
  EXPECT_DOUBLE_EQ(zbv.rankMemory[0].total(), zbv.memory.total());
  EXPECT_LT(zbv.rankMemory[1].parameters, zbv.rankMemory[0].parameters);
  // Tied, the head reads the embedding rank 0 already holds: no copy.
  job.model.tiedEmbeddings = true;
  Estimate tied = evaluateLayout(job, parseLayout("pp4,zb-v"));
  EXPECT_DOUBLE_EQ(tied.memory.parameters, 2 * (layers + embeddingParameters(job.model)));
}

// DualPipeV's pairs hide one micro-batch's communication under another's
// compute: with tensor parallelism, less of it shows than under ZB-V, and
// the breakdown still adds up to the iteration.
TEST(VSchedules, DualPipeVHidesCommunicationUnderItsPairs) {
  TrainingJob job = roundJob(1, 8, 16);
  Estimate zbv = evaluateLayout(job, parseLayout("pp4,tp2,zb-v"));
  Estimate dual = evaluateLayout(job, parseLayout("pp4,tp2,dualpipe-v"));
  ASSERT_GT(zbv.time.tpComm, 0);
  EXPECT_LT(dual.time.tpComm, 0.5 * zbv.time.tpComm);
  EXPECT_NEAR(dual.iterationSeconds, dual.time.total(), 1e-9 * dual.iterationSeconds);
}

// Four single-device nodes on a slow link and a batch of 6: pp 4 wins, and
// of its schedules ZB-V has the smallest bubble.
TEST(VSchedules, SearchPicksZbVWhereItWins) {
  TrainingJob job = roundJob(4, 1, 6);
  job.cluster.interNode.bandwidth = 1e8;
  SearchOptions options;
  options.microBatchSizes = {1};
  SearchResult r = searchLayouts(job, options);
  ASSERT_FALSE(r.best.empty());
  EXPECT_EQ(toString(r.best.front().layout), "pp4,tp1,dp1,mb1,v1,zb-v,zero0");
  options.schedules = {"1f1b", "interleaved-1f1b", "zb-h1", "gpipe"};
  EXPECT_NE(searchLayouts(job, options).best.front().layout.schedule, "zb-v");
}

}  // namespace
}  // namespace strata::plan
