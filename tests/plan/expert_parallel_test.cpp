// Mixture-of-experts models and expert parallelism (ep) in the planner: the
// counts, the layout's text and rank order, the rules the trainer enforces,
// and what ep does to memory, time and the search. Expected values are
// worked out here from the sizes, not asked of the planner.
#include <gtest/gtest.h>

#include <string>

#include "round_job.h"
#include "strata/plan/cost_model.h"
#include "strata/plan/errors.h"
#include "strata/plan/memory.h"
#include "strata/plan/search.h"

namespace strata::plan {
namespace {

// A llama small enough to count by hand: hidden 8, 2 heads sharing one kv
// head (kv width 4), ffn 32, vocabulary 16, 4 tokens; two layers, the second
// MoE (every 2) with 4 experts of width 16, top 2, one shared expert.
ModelDesc tinyMoe() {
  ModelDesc m{"tiny-moe", 2, 8, 2, 32, 16, 4, false, Family::kLlama, 1};
  m.moe = {4, 2, 16, 1, 2};
  return m;
}

// A llama on the round cluster (round_job.h): 4 layers of hidden 1024, every
// second one MoE, 8 experts of width 1024, top 2; sequence 1024.
TrainingJob roundMoeJob(int nodes, int devicesPerNode, int batch) {
  TrainingJob job = roundJob(nodes, devicesPerNode, batch);
  job.model = {"round-moe", 4, 1024, 16, 4096, 8, 1024, false, Family::kLlama, 16};
  job.model.moe = {8, 2, 1024, 0, 2};
  return job;
}

std::string refusal(const ModelDesc& m) {
  try {
    m.validate();
  } catch (const PlanError& e) {
    return e.what();
  }
  return "";
}

TEST(ExpertParallelModel, MixtralCountsAreThePublishedOnes) {
  ModelDesc m = modelPreset("mixtral-8x7b");
  // h = 4096, kv = 8 heads x 128 = 1024, ef = 14336, E = 8, k = 2, V = 32000:
  //   attention 2h^2 + 2h kv = 41,943,040; norms 2h = 8,192; router E h = 32,768
  //   one expert 3 h ef = 176,160,768
  double expert = 3.0 * 4096 * 14336;
  double layerWithout = 41943040.0 + 8192 + 32768;
  EXPECT_DOUBLE_EQ(expertParameters(m), expert);
  EXPECT_DOUBLE_EQ(layerParameters(m, LayerKind::kMoe), layerWithout + 8 * expert);
  EXPECT_EQ(moeLayerCount(m), 32);
  // 32 layers + the embedding V h + h (final norm) + the untied head V h.
  double ends = 32000.0 * 4096 + 4096 + 32000.0 * 4096;
  EXPECT_DOUBLE_EQ(parameterCount(m), 32 * (layerWithout + 8 * expert) + ends);
  EXPECT_DOUBLE_EQ(parameterCount(m), 46702792704.0);
  EXPECT_DOUBLE_EQ(activeParameterCount(m), 32 * (layerWithout + 2 * expert) + ends);
  EXPECT_DOUBLE_EQ(activeParameterCount(m), 12879925248.0);
  // Mistral AI's "46.7B total, 12.9B active", within 1%.
  EXPECT_NEAR(parameterCount(m) / 46.7e9, 1, 0.01);
  EXPECT_NEAR(activeParameterCount(m) / 12.9e9, 1, 0.01);
}

TEST(ExpertParallelModel, CountsAndFlopsOfASmallMoeByHand) {
  ModelDesc m = tinyMoe();
  m.validate();
  EXPECT_EQ(moeLayerCount(m), 1);  // layer 1: (1 + 1) % 2 == 0
  EXPECT_EQ(moeLayersIn(m, 0, 1), 0);
  EXPECT_EQ(moeLayersIn(m, 1, 1), 1);
  // Dense: 2h^2 + 2h kv + 3hf + 2h = 128 + 64 + 768 + 16.
  EXPECT_DOUBLE_EQ(layerParameters(m), 976);
  // MoE: 128 + 64 + 16, the router 4 x 8, the shared SwiGLU 3 x 8 x 16,
  // four experts of 3 x 8 x 16.
  EXPECT_DOUBLE_EQ(layerParameters(m, LayerKind::kMoe), 208 + 32 + 384 + 4 * 384);
  double ends = 16 * 8 + 8 + 16 * 8;
  EXPECT_DOUBLE_EQ(parameterCount(m), 976 + 2160 + ends);
  EXPECT_DOUBLE_EQ(activeParameterCount(m), 976 + 2160 - 2 * 384 + ends);
  // Forward of one sequence of 4 tokens: attention 2*4*(128 + 64) +
  // 4*16*8, the MLP 2*4*(router 32 + shared 384 + top 2 x 384).
  double moeForward = 2 * 4 * 192 + 512 + 2 * 4 * (32 + 384 + 2 * 384);
  EXPECT_DOUBLE_EQ(layerForwardFlops(m, 1, LayerKind::kMoe), moeForward);
  double denseForward = 2 * 4 * (192 + 3 * 8 * 32) + 512;
  EXPECT_DOUBLE_EQ(trainingFlops(m, 1, false),
                   3 * (denseForward + moeForward) + 3 * 2 * 4 * 8 * 16);
  // tp 2 replicates the one kv head (k and v: 2*4*64 FLOPs whole, one kv
  // head's 2*2*4*8*4 on each rank) and runs the router whole (2*4*32).
  EXPECT_DOUBLE_EQ(tpRankLayerForwardFlops(m, 1, 2, LayerKind::kMoe),
                   (moeForward - 512 - 256) / 2 + 512 + 256);
  // What a rank of tp 2, ep 2 holds: half of the layer but its router,
  // norms and experts, the router (32) and the two RMSNorms (16) whole, the
  // replicated k and v's other half (32), and 2 of the 4 experts, half of
  // each.
  EXPECT_DOUBLE_EQ(tpRankExpertParameters(m, 2, 2), 2 * 384 / 2.0);
  EXPECT_DOUBLE_EQ(tpRankLayerParameters(m, LayerKind::kMoe, 2, 2),
                   (2160 - 4 * 384 - 32 - 16) / 2.0 + 32 + 16 + 32 + 384);
}

TEST(ExpertParallelModel, ShapesTheTrainerRefusesAreNamed) {
  ModelDesc m = tinyMoe();
  m.moe.topK = 5;
  EXPECT_EQ(refusal(m), "model 'tiny-moe': moe top_k 5 is not between 1 and the 4 experts");
  m = tinyMoe();
  m.moe.expertFfn = 0;
  EXPECT_EQ(refusal(m), "model 'tiny-moe': moe expert_ffn 0 and every 2 must both be at least 1");
  m = tinyMoe();
  m.moe.sharedExperts = -1;
  EXPECT_EQ(refusal(m), "model 'tiny-moe': moe shared_experts -1 is negative");
  m = tinyMoe();
  m.moe.experts = -2;
  EXPECT_EQ(refusal(m), "model 'tiny-moe': moe experts -2 is negative (0: a dense model)");
  ModelDesc gpt = modelPreset("gpt2-small");
  gpt.moe = {8, 2, 3072};
  EXPECT_EQ(refusal(gpt),
            "model 'gpt2-small': moe experts 8 on a GPT: only architecture llama has "
            "mixture-of-experts layers");
  // The --moe-* flags name what they change.
  ModelOverrides moe;
  moe.experts = 8;
  moe.expertFfn = 14336;
  moe.topK = 2;  // the default: no change to name
  ModelDesc mixture = overrideSizes(modelPreset("llama3-8b"), moe);
  EXPECT_EQ(mixture.name, "llama3-8b with moe-experts 8, moe-expert-ffn 14336");
  EXPECT_EQ(mixture.moe.experts, 8);
}

TEST(ExpertParallelLayout, TextFormAndStridesFollowTheTrainersGroups) {
  Layout l = parseLayout("tp2,dp4,cp2,ep4,zero1");
  EXPECT_EQ(l.ep, 4);
  EXPECT_EQ(l.devices(), 16);  // ep is carved out of dp x cp
  EXPECT_EQ(toString(l), "pp1,tp2,dp4,cp2,ep4,mb1,v1,1f1b,zero1");
  EXPECT_EQ(toString(parseLayout(toString(l))), toString(l));
  EXPECT_EQ(toString(parseLayout("dp4,ep1")), "pp1,tp1,dp4,mb1,v1,1f1b,zero0");
  // The trainer (moe_training.cpp) cuts the dp x cp replicas, replica i at
  // rank t + tp i, into ep groups i / ep and expert replicas i % ep: rank
  // 0's ep group is ranks 0, 2, 4, 6 and its experts' replicas 0 and 8.
  EXPECT_EQ(l.epStride(), 2);
  EXPECT_EQ(l.expertReplicas(), 2);
  EXPECT_EQ(l.expertReplicaStride(), 8);
  EXPECT_THROW(parseLayout("ep0"), PlanError);
  try {
    parseLayout("ep-2");
    FAIL() << "accepted ep-2";
  } catch (const PlanError& e) {
    EXPECT_NE(std::string(e.what()).find("cp-a2a, epN, mbN"), std::string::npos) << e.what();
  }
}

TEST(ExpertParallelRules, CheckLayoutRefusesWhatTheTrainerRefuses) {
  TrainingJob job = roundMoeJob(1, 8, 8);
  EXPECT_EQ(checkLayout(job, parseLayout("dp8,ep8,zero2")), "");
  EXPECT_EQ(checkLayout(job, parseLayout("dp2,cp4,ep8")), "");
  EXPECT_EQ(checkLayout(job, parseLayout("dp8,ep3")),
            "ep 3 does not divide dp 8 x cp 1 = 8 (expert parallelism is carved out of the "
            "replicas)");
  EXPECT_EQ(checkLayout(job, parseLayout("dp8,ep2,zero3")), "");  // experts over their 4 replicas
  EXPECT_EQ(checkLayout(job, parseLayout("dp8,zero3")), "");      // ZeRO-3 shards experts at ep 1
  EXPECT_EQ(checkLayout(job, parseLayout("tp2,dp4,ep2,sp")),
            "mixture-of-experts layers route whole tokens and do not take sequence parallel; "
            "drop sp (tp 2)");
  Layout none = parseLayout("dp8");
  none.ep = 0;
  EXPECT_NE(checkLayout(job, none).find("pp, tp, dp, cp, ep, v and mb must all be at least 1"),
            std::string::npos);
  TrainingJob fewer = job;
  fewer.model.moe.experts = 4;
  EXPECT_EQ(checkLayout(fewer, parseLayout("dp8,ep8")), "ep 8 does not divide the 4 experts");
  TrainingJob odd = job;
  odd.model.moe.expertFfn = 1020;
  EXPECT_EQ(checkLayout(odd, parseLayout("tp8")), "tp 8 does not divide expert_ffn 1020");
  EXPECT_EQ(checkLayout(roundJob(1, 8, 8), parseLayout("dp8,ep2")),
            "ep 2 spreads experts, but model toy has none (no mixture-of-experts layers)");
  EXPECT_THROW(evaluateLayout(job, parseLayout("dp8,ep3")), PlanError);
}

// Mixtral on eight devices, every parameter on each (pp 1, tp 1): the
// experts' weights (and ZeRO-1's flat copy of them) and gradients fall with
// ep, the rest stays; ZeRO-1 shards the experts' optimizer state over dp /
// ep ranks holding ep times fewer experts, the same per rank at every ep.
TEST(ExpertParallelMemory, ExpertStateFallsWithEp) {
  TrainingJob job = roundJob(1, 8, 8);
  job.model = modelPreset("mixtral-8x7b");
  job.model.seqLen = 1024;
  double experts = 32 * 8 * expertParameters(job.model);
  double common = parameterCount(job.model) - experts;
  double activations = 0;
  for (int ep : {1, 2, 4, 8}) {
    Layout l = parseLayout("dp8,zero1,ep" + std::to_string(ep));
    Estimate e = evaluateLayout(job, l);
    double held = common + experts / ep;
    EXPECT_DOUBLE_EQ(e.memory.parameters, 2 * held + 2 * held) << ep;
    EXPECT_DOUBLE_EQ(e.memory.gradients, 2 * held) << ep;
    EXPECT_DOUBLE_EQ(e.memory.optimizer, 12 * common / 8 + 12 * (experts / ep) / (8.0 / ep)) << ep;
    // Balanced routing: a rank's experts take top_k rows a token at every ep.
    if (ep == 1) activations = e.memory.activations;
    EXPECT_DOUBLE_EQ(e.memory.activations, activations) << ep;
    // Without ZeRO the optimizer state falls too.
    Estimate plain = evaluateLayout(job, parseLayout("dp8,ep" + std::to_string(ep)));
    EXPECT_DOUBLE_EQ(plain.memory.optimizer, 12 * held) << ep;
  }
}

// An MoE layer keeps its MLP's activations in place of the SwiGLU's 3f/t
// values a token (memory.h): for tinyMoe at tp 2 a token of the rank keeps,
// per assignment, 3h + 3ef/t = 24 + 24 values, twice, and the shared
// expert's 3 x 16 / 2 = 24: 120 values where the dense MLP keeps
// 3 x 32 / 2 = 48; and the router's 12E + 24k + 32 = 128 bytes.
TEST(ExpertParallelMemory, AnMoeLayerKeepsItsExpertsRows) {
  ModelDesc m = tinyMoe();
  EXPECT_DOUBLE_EQ(moeMlpValuesPerToken(m, 2), 120);
  EXPECT_DOUBLE_EQ(moeRouterBytesPerToken(m), 128);
  for (int cp : {1, 2})
    for (CpAlgorithm algorithm : {CpAlgorithm::kRing, CpAlgorithm::kAllToAll}) {
      double dense = workingActivationBytes(m, 3, 2, false, cp, algorithm);
      double moe = workingActivationBytes(m, 3, 2, false, cp, algorithm, LayerKind::kMoe);
      EXPECT_DOUBLE_EQ(moe - dense, 3 * (4.0 / cp) * ((120 - 48) * 2 + 128)) << cp;
    }
  // Full recompute stashes the layer's input whatever its MLP.
  EXPECT_DOUBLE_EQ(
      stashedActivationBytes(m, 3, 2, false, true, 1, CpAlgorithm::kRing, LayerKind::kMoe),
      stashedActivationBytes(m, 3, 2, false, true));
}

// The round cluster has no latency and noiseless devices: an all-to-all of
// n bytes over p ranks takes (p - 1)/p n / bandwidth. Each of the 2 MoE
// layers trades b*S*k*h = 1024 x 2 x 1024 two-byte values (4 MiB) four times
// a micro-batch, and exchanges 8 experts' int64 counts once.
TEST(ExpertParallelTime, AllToAllsFollowTheVolumeAndTheLinkTheGroupCrosses) {
  TrainingJob job = roundMoeJob(2, 4, 8);
  double rows = 2.0 * 1024 * 2 * 1024;
  auto expected = [&](int ep, double bandwidth, int passes) {
    double share = (ep - 1.0) / ep;
    return 2 * (passes * share * rows + share * 64) / bandwidth;
  };
  // ep 4: four consecutive ranks, one node's link. ep 8 spans both nodes.
  Estimate inside = evaluateLayout(job, parseLayout("dp8,ep4"));
  EXPECT_DOUBLE_EQ(inside.time.epComm, expected(4, 1e11, 4));
  Estimate across = evaluateLayout(job, parseLayout("dp8,ep8"));
  EXPECT_DOUBLE_EQ(across.time.epComm, expected(8, 1e10, 4));
  EXPECT_EQ(evaluateLayout(job, parseLayout("dp8")).time.epComm, 0);
  // Full recompute runs the forward, its two exchanges and the counts, again.
  Estimate redo = evaluateLayout(job, parseLayout("dp8,ep4,recompute"));
  EXPECT_DOUBLE_EQ(redo.time.epComm, expected(4, 1e11, 6) + 2 * 0.75 * 64 / 1e11);
  // Under cp a rank trades its S/cp tokens' rows, in 8 / dp 4 = 2 micro-batches.
  Estimate cp = evaluateLayout(job, parseLayout("dp4,cp2,ep4"));
  EXPECT_DOUBLE_EQ(cp.time.epComm, 2 * 2 * (4 * 0.75 * rows / 2 + 0.75 * 64) / 1e11);
  EXPECT_GT(inside.time.total(), inside.time.epComm);
}

// One device, so the compute is the whole step's FLOPs: an MoE layer runs
// its tokens' top 2 of 8 experts, not all 8.
TEST(ExpertParallelTime, ComputeCountsActiveFlops) {
  TrainingJob job = roundMoeJob(1, 1, 2);
  Estimate e = evaluateLayout(job, parseLayout("mb1"));
  EXPECT_NEAR(e.time.compute / (trainingFlops(job.model, 2, false) / 0.5e12), 1, 1e-6);
  // All 8 experts would run 6 more, 2 FLOPs a weight and token, three
  // passes, in each of the 2 MoE layers, over 2 x 1024 tokens.
  ModelDesc everyExpert = job.model;
  everyExpert.moe.topK = 8;
  EXPECT_DOUBLE_EQ(trainingFlops(everyExpert, 2, false) - trainingFlops(job.model, 2, false),
                   3 * 2 * 2 * 2048.0 * 6 * expertParameters(job.model));
}

// Gradients of the experts are averaged over the dp x cp / ep ranks holding
// them, after the rest's over dp x cp. Compute and the all-to-alls (on a
// point-to-point path of their own) next to free, and the buckets one
// message each, leave the traffic exposed whole.
TEST(ExpertParallelTime, ExpertGradientsReduceOverTheirOwnReplicas) {
  TrainingJob job = roundMoeJob(1, 8, 8);
  job.cluster.device.peakBf16Flops = 1e24;
  job.cluster.device.memoryBandwidth = 1e30;
  job.cluster.intraNodeP2p = Link{1e30, 0};
  job.buckets = {1e30, 1e30};
  double experts = 2 * 8 * expertParameters(job.model);
  double common = parameterCount(job.model) - experts;
  auto allReduce = [](double params, int ranks) {
    return 2 * (ranks - 1.0) / ranks * 2 * params / 1e11;
  };
  Estimate whole = evaluateLayout(job, parseLayout("dp8"));
  EXPECT_NEAR(whole.time.dpExposed / allReduce(common + experts, 8), 1, 1e-6);
  // ep 4: each rank holds 2 of the 8 experts, replicated on 2 ranks.
  Estimate split = evaluateLayout(job, parseLayout("dp8,ep4"));
  EXPECT_NEAR(split.time.dpExposed / (allReduce(common, 8) + allReduce(experts / 4, 2)), 1, 1e-6);
  // ep 8: every expert on one rank, nothing to average.
  Estimate alone = evaluateLayout(job, parseLayout("dp8,ep8"));
  EXPECT_NEAR(alone.time.dpExposed / allReduce(common, 8), 1, 1e-6);
}

// Mixtral on four p4d nodes (32 A100s of 40 GB), sequences of 4096: at ep 1
// the leading layouts recompute their activations to fit (recompute only
// adds time, so the search takes it only where memory asks for it); ep
// spreads the experts and lets the activations be kept.
TEST(ExpertParallelSearch, ChoosesEpWhenMemoryRequiresIt) {
  TrainingJob job;
  job.model = modelPreset("mixtral-8x7b");
  job.model.seqLen = 4096;
  job.cluster = clusterPreset("p4d.24xlarge");
  job.cluster.nodes = 4;
  job.globalBatch = 64;
  SearchOptions o;
  o.top = 3;
  SearchResult r = searchLayouts(job, o);
  ASSERT_FALSE(r.best.empty());
  for (const Estimate& e : r.best) {
    EXPECT_GT(e.layout.ep, 1) << toString(e.layout);
    EXPECT_FALSE(e.layout.sequenceParallel) << toString(e.layout);
    EXPECT_EQ(checkLayout(job, e.layout), "") << toString(e.layout);
  }
  EXPECT_FALSE(r.best.front().layout.recompute) << toString(r.best.front().layout);
  o.maxExpertParallel = 1;
  SearchResult without = searchLayouts(job, o);
  for (const Estimate& e : without.best) {
    EXPECT_EQ(e.layout.ep, 1);
    EXPECT_TRUE(e.layout.recompute) << toString(e.layout);
  }
  EXPECT_GT(r.best.front().samplesPerSecond, without.best.front().samplesPerSecond);
  // Without recompute, ep is what makes the cluster big enough.
  o.maxExpertParallel = 1 << 30;
  o.recompute = {false};
  EXPECT_GT(searchLayouts(job, o).best.front().layout.ep, 1);
}

}  // namespace
}  // namespace strata::plan
