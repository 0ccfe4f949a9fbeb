#include "strata/plan/cost_model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "round_job.h"
#include "strata/plan/comm.h"
#include "strata/plan/errors.h"

namespace strata::plan {
namespace {

TEST(CostModel, SingleDeviceTimeIsFlopsOverAchievedRate) {
  TrainingJob job = roundJob(1, 1, 4);
  Estimate e = evaluateLayout(job, parseLayout("pp1,tp1,dp1,mb1"));
  double seconds = trainingFlops(job.model, 4, false) / 0.5e12;
  EXPECT_NEAR(e.time.compute, seconds, 1e-6 * seconds);
  EXPECT_NEAR(e.iterationSeconds, seconds, 1e-6 * seconds);
  EXPECT_EQ(e.time.bubble, 0);
  EXPECT_NEAR(e.modelFlopsPerDevice, 0.5e12, 1e6);
  EXPECT_NEAR(e.mfu, 0.5, 1e-6);
}

TEST(CostModel, PipelineBubbleComesFromTheSimulator) {
  // 4 stages, 8 micro-batches of 1F1B with equal stages: the bubble is
  // (p - 1) stage-micro-batch times: (p-1)/m of the compute.
  TrainingJob job = roundJob(1, 4, 8);
  Estimate e = evaluateLayout(job, parseLayout("pp4,tp1,dp1,mb1,1f1b"));
  EXPECT_NEAR(e.time.bubble / e.time.compute, 3.0 / 8.0, 1e-3);
  Estimate zb = evaluateLayout(job, parseLayout("pp4,tp1,dp1,mb1,zb-h1"));
  EXPECT_LT(zb.time.bubble, e.time.bubble);
  Estimate interleaved = evaluateLayout(job, parseLayout("pp4,tp1,dp1,mb1,v2,interleaved-1f1b"));
  EXPECT_LT(interleaved.time.bubble, e.time.bubble);
}

TEST(CostModel, ActivationMemoryFollowsTheSchedulesStash) {
  TrainingJob job = roundJob(1, 4, 16);
  Estimate gpipe = evaluateLayout(job, parseLayout("pp4,mb1,gpipe"));
  Estimate oneF = evaluateLayout(job, parseLayout("pp4,mb1,1f1b"));
  EXPECT_EQ(gpipe.peakStash, 16);  // every micro-batch
  EXPECT_EQ(oneF.peakStash, 4);    // p on the first stage
  EXPECT_NEAR(gpipe.memory.activations / oneF.memory.activations, 4.0, 0.01);
  EXPECT_DOUBLE_EQ(gpipe.memory.optimizer, oneF.memory.optimizer);
}

// The trainer's recompute keeps each stage's input and rebuilds a whole
// stage for one micro-batch's backward: its heaviest rank holds one
// micro-batch of a stage, where without it the first rank holds the 1F1B
// stash of two. Per-layer recompute (Megatron-LM's, Framework's
// layerRecompute) keeps each layer's input and rebuilds one layer at a time.
TEST(CostModel, RecomputeTradesTimeForMemory) {
  TrainingJob job = roundJob(1, 2, 8);
  Estimate plain = evaluateLayout(job, parseLayout("pp2,mb1"));
  Estimate redo = evaluateLayout(job, parseLayout("pp2,mb1,recompute"));
  EXPECT_LT(redo.memory.activations, 0.6 * plain.memory.activations);
  EXPECT_GT(redo.iterationSeconds, plain.iterationSeconds);
  // The extra forward is a third of the transformer layers' compute.
  EXPECT_NEAR(redo.time.recompute / redo.time.compute, 1.0 / 3.0, 0.01);
  EXPECT_GT(redo.hardwareFlopsPerDevice, redo.modelFlopsPerDevice);
  job.framework.layerRecompute = true;
  Estimate perLayer = evaluateLayout(job, parseLayout("pp2,mb1,recompute"));
  EXPECT_LT(perLayer.memory.activations, plain.memory.activations / 4);
}

// ZeRO-1 shards the optimizer state and ZeRO-3 everything; the trainer's
// ZeRO-2 keeps the whole flat gradient autograd accumulates into beside the
// averaged chunks it reduce-scatters to (memory.h), so it holds more than
// ZeRO-1.
TEST(CostModel, ZeroStagesShrinkModelState) {
  TrainingJob job = roundJob(1, 8, 8);
  std::vector<double> state;
  for (int zero = 0; zero <= 3; ++zero) {
    Layout l = parseLayout("dp8,mb1");
    l.zeroStage = zero;
    MemoryBreakdown m = evaluateLayout(job, l).memory;
    state.push_back(m.parameters + m.gradients + m.optimizer);
  }
  EXPECT_LT(state[1], state[0]);
  EXPECT_GT(state[2], state[1]);
  EXPECT_LT(state[3], state[1]);
}

// ZeRO-3 holds 1/dp of the model state, plus what it gathers: two layers' weights (the
// running one and the prefetched) and one layer's gradient. It composes with
// a pipeline (one reduce-scatter per step); ZeRO-2 does not.
TEST(CostModel, ZeroThreeAddsTheGatheredLayersAndComposesWithPipelines) {
  TrainingJob job = roundJob(1, 8, 8);
  Layout l = parseLayout("dp8,mb1,zero3");
  Estimate e = evaluateLayout(job, l);
  double params = 8 * layerParameters(job.model) + embeddingParameters(job.model);
  double layer = std::max(layerParameters(job.model), embeddingParameters(job.model));
  const Precision& p = job.precision;
  EXPECT_NEAR(e.memory.parameters, params * p.weightBytes / 8 + 2 * layer * p.weightBytes,
              1e-9 * e.memory.parameters);
  EXPECT_NEAR(e.memory.gradients, params * p.gradBytes / 8 + layer * p.gradBytes,
              1e-9 * e.memory.gradients);
  EXPECT_NEAR(e.memory.optimizer, params * p.optimizerBytes / 8, 1e-9 * e.memory.optimizer);
  EXPECT_EQ(checkLayout(job, parseLayout("pp2,dp4,mb1,zero3")), "");
  EXPECT_NE(checkLayout(job, parseLayout("pp2,dp4,mb1,zero2")).find("ZeRO-2"), std::string::npos);
}

// A framework that gathers every parameter tensor by itself holds the running tensor and the
// prefetched one, the largest of which is the word embedding or an MLP matrix, not two whole
// layers; and with one micro-batch the running tensor's full gradient.
TEST(CostModel, ZeroThreeByTensorHoldsTwoTensorsNotTwoLayers) {
  TrainingJob job = roundJob(1, 8, 8);
  job.framework.zero3Gathering = Framework::Zero3Gathering::kByTensor;
  Estimate e = evaluateLayout(job, parseLayout("dp8,mb1,zero3"));
  double params = 8 * layerParameters(job.model) + embeddingParameters(job.model);
  double h = job.model.hidden;
  double tensor = std::max(h * job.model.ffn, embeddingParameters(job.model));
  const Precision& p = job.precision;
  EXPECT_NEAR(e.memory.parameters, params * p.weightBytes / 8 + 2 * tensor * p.weightBytes,
              1e-9 * e.memory.parameters);
  EXPECT_NEAR(e.memory.gradients, params * p.gradBytes / 8 + tensor * p.gradBytes,
              1e-9 * e.memory.gradients);
}

// On a link so slow that compute hides nothing, a framework that gathers
// every matrix by itself takes each matrix's bytes four times a micro-batch
// under recompute, one after another on the link: gathered for the
// forward, for the recompute and for the backward, and its gradient
// reduce-scattered. Without recompute, one gather fewer. The tied word
// embedding (8 x 1024) is gathered for its lookup and for the head in both
// passes, and its gradient reduced once; the position table (1024 x 1024)
// for its lookup and its backward.
TEST(CostModel, ZeroThreeByTensorGathersEveryMatrixAgainForItsRecompute) {
  TrainingJob job = roundJob(1, 8, 8);
  job.cluster.intraNode = {1e6, 0};
  job.framework.zero3Gathering = Framework::Zero3Gathering::kByTensor;
  double h = 1024, w = job.precision.weightBytes, g = job.precision.gradBytes;
  auto ring = [](double bytes) { return 7.0 / 8 * bytes / 1e6; };
  double layers = 8 * 12 * h * h, words = 8 * h, positions = h * h;
  double embedding =
      4 * ring(words * w) + ring(words * g) + 2 * ring(positions * w) + ring(positions * g);
  double withRecompute = 3 * ring(layers * w) + ring(layers * g) + embedding;
  double withoutRecompute = 2 * ring(layers * w) + ring(layers * g) + embedding;
  EXPECT_NEAR(evaluateLayout(job, parseLayout("dp8,mb1,zero3,recompute")).iterationSeconds,
              withRecompute, 1e-3 * withRecompute);
  EXPECT_NEAR(evaluateLayout(job, parseLayout("dp8,mb1,zero3")).iterationSeconds, withoutRecompute,
              1e-3 * withoutRecompute);
}

// The same four passes for a llama with grouped-query attention and MoE
// layers under ep = 2: q and o (h^2), k and v (h x 256 for 4 of 16 heads),
// gate, up and down (h f) in the dense layers; in the MoE ones the router
// (8 h) and each of the rank's 4 experts' three (h x 512), which only the
// 2 ranks holding the same experts gather; the untied word embedding and
// head, each gathered twice and reduced once. Both groups span the two
// nodes, whose link is the slow one; the ep pairs' all-to-alls stay inside.
TEST(CostModel, ZeroThreeByTensorGathersExpertsOverTheirOwnReplicas) {
  TrainingJob job = roundJob(2, 2, 4);
  job.model = {"round-moe", 4, 1024, 16, 4096, 8, 1024, false, Family::kLlama, 4};
  job.model.moe = {8, 2, 512, 0, 2};
  job.cluster.interNode = {1e6, 0};
  job.framework.zero3Gathering = Framework::Zero3Gathering::kByTensor;
  double h = 1024, w = job.precision.weightBytes, g = job.precision.gradBytes;
  auto ring = [](double bytes, double p) { return (p - 1) / p * bytes / 1e6; };
  double attention = 2 * h * h + 2 * h * 256;
  double common = 2 * (attention + 3 * h * 4096) + 2 * (attention + 8 * h);
  double experts = 2 * 4 * 3 * h * 512;
  double ends = 2 * 8 * h;
  auto passes = [&](double elements, double p) {
    return 3 * ring(elements * w, p) + ring(elements * g, p);
  };
  double expected =
      passes(common, 4) + passes(experts, 2) + 2 * ring(ends * w, 4) + ring(ends * g, 4);
  EXPECT_NEAR(evaluateLayout(job, parseLayout("dp4,ep2,mb1,zero3,recompute")).iterationSeconds,
              expected, 1e-3 * expected);
}

// With lasting differences only (jitter 0) the waits are linear in the work:
// a layer's four tp collectives follow half its forward and half its
// backward each, so the tp ranks wait spread x E[max of 2] x the layers'
// compute in all; dp replicas wait that for their whole step once.
TEST(CostModel, CollectivesWaitForTheSlowestMember) {
  double slowestOfTwo = 1 / std::sqrt(M_PI);
  TrainingJob job = roundJob(1, 2, 4);
  TrainingJob noisy = job;
  noisy.cluster.device.noise = {0.05, 0};
  for (const char* layout : {"pp1,tp2,dp1,mb1", "pp1,tp1,dp2,mb1"}) {
    SCOPED_TRACE(layout);
    Estimate quiet = evaluateLayout(job, parseLayout(layout));
    Estimate waiting = evaluateLayout(noisy, parseLayout(layout));
    double wait = 0.05 * slowestOfTwo * quiet.time.compute;
    double waited =
        waiting.time.tpComm - quiet.time.tpComm + waiting.time.dpExposed - quiet.time.dpExposed;
    EXPECT_NEAR(waited, wait, 1e-3 * wait);
    EXPECT_NEAR(waiting.iterationSeconds - quiet.iterationSeconds, wait, 1e-3 * wait);
  }
}

// dp 8 with 4 micro-batches of one sequence, on a link slow enough that the
// ZeRO-3 gathers and the reduce-scatter are not all hidden.
TrainingJob slowLinkZeroThreeJob() {
  TrainingJob job = roundJob(1, 8, 32);
  job.cluster.intraNode = {1e8, 0};
  return job;
}

// Ring collectives over dp 8 (comm.h): (p - 1) / p * bytes / bandwidth.
double ringSeconds(double bytes) { return 7.0 / 8.0 * bytes / 1e8; }

// One pass over 8 layers of `compute` seconds each whose collectives take
// `traffic`, each prefetched behind the layer before: the first layer's
// whole, then each layer's excess (fully_sharded_time.cpp).
double prefetchedPass(double compute, double traffic) {
  return traffic + 8 * std::max(0.0, traffic - compute);
}

// Kept gathered (reshard_after_forward = false), ZeRO-3 gathers each layer
// once per step, in the first micro-batch's forward, and holds every layer
// of the rank; resharding gathers each layer before its forward and its
// backward in every micro-batch and holds two layers. Either way the step's
// last backward reduce-scatters the layers' gradients one by one.
TEST(CostModel, ZeroThreeKeptGatheredGathersOncePerStepAndHoldsEveryLayer) {
  TrainingJob job = slowLinkZeroThreeJob();
  Estimate resharding = evaluateLayout(job, parseLayout("dp8,mb1,zero3"));
  Estimate kept = evaluateLayout(job, parseLayout("dp8,mb1,zero3,no-reshard"));
  ASSERT_EQ(kept.microBatches, 4);
  double params = 8 * layerParameters(job.model) + embeddingParameters(job.model);
  double layer = std::max(layerParameters(job.model), embeddingParameters(job.model));
  const Precision& p = job.precision;
  EXPECT_NEAR(kept.memory.parameters, params * p.weightBytes / 8 + params * p.weightBytes,
              1e-9 * kept.memory.parameters);
  EXPECT_NEAR(resharding.memory.parameters, params * p.weightBytes / 8 + 2 * layer * p.weightBytes,
              1e-9 * resharding.memory.parameters);
  // A micro-batch's compute on one layer (the embedding's few FLOPs aside):
  // its forward is a third. The embedding's weights are spread over the
  // layers.
  double microBatch = trainingFlops(job.model, 1, false) / 0.5e12 / 8;
  double forward = microBatch / 3, backward = microBatch - forward;
  double gather = ringSeconds(params * p.weightBytes / 8);
  double reduce = ringSeconds(params * p.gradBytes / 8);
  ASSERT_GT(gather, forward);
  EXPECT_NEAR(kept.time.dpExposed,
              prefetchedPass(forward, gather) + prefetchedPass(backward, reduce),
              1e-6 * kept.time.dpExposed);
  EXPECT_NEAR(resharding.time.dpExposed,
              4 * prefetchedPass(forward, gather) + 3 * prefetchedPass(backward, gather) + gather +
                  8 * std::max(0.0, gather + reduce - backward) + reduce,
              1e-6 * resharding.time.dpExposed);
}

// Over several micro-batches ZeRO-3 keeps every layer's full gradient until
// the step's reduce-scatter (FSDP's no_sync), which makes the shards as it
// drops them; with one, only the running layer's beside the shards.
TEST(CostModel, ZeroThreeKeepsFullGradientsAcrossMicroBatches) {
  TrainingJob job = slowLinkZeroThreeJob();
  double params = 8 * layerParameters(job.model) + embeddingParameters(job.model);
  double layer = std::max(layerParameters(job.model), embeddingParameters(job.model));
  double g = job.precision.gradBytes;
  for (const char* text : {"dp8,mb1,zero3", "dp8,mb1,zero3,no-reshard"}) {
    Estimate accumulating = evaluateLayout(job, parseLayout(text));
    ASSERT_EQ(accumulating.microBatches, 4) << text;
    EXPECT_NEAR(accumulating.memory.gradients, params * g, 1e-9 * accumulating.memory.gradients)
        << text;
  }
  Estimate single = evaluateLayout(job, parseLayout("dp8,mb4,zero3"));
  ASSERT_EQ(single.microBatches, 1);
  EXPECT_NEAR(single.memory.gradients, params * g / 8 + layer * g, 1e-9 * single.memory.gradients);
}

TEST(CostModel, TensorParallelAcrossNodesIsSlower) {
  TrainingJob job = roundJob(2, 4, 8);
  job.allowCrossNodeTp = true;
  Estimate inside = evaluateLayout(job, parseLayout("tp4,dp2"));
  Estimate across = evaluateLayout(job, parseLayout("tp8,dp1"));
  EXPECT_GT(across.time.tpComm / across.microBatches, 4 * inside.time.tpComm / inside.microBatches);
}

// 2 nodes x 2 devices, pp2 x tp2: tp inside the nodes and the pipeline across
// them, or the pp-inner placement with the pipeline inside and tp across.
TEST(CostModel, PpInnerPlacementMovesTensorParallelOntoTheInterNodeLink) {
  TrainingJob job = roundJob(2, 2, 8);
  job.allowCrossNodeTp = true;
  Estimate tpInner = evaluateLayout(job, parseLayout("pp2,tp2,mb1"));
  Estimate ppInner = evaluateLayout(job, parseLayout("pp2,tp2,mb1,pp-inner"));
  // tp all-reduces move 10x slower; everything else is the same work.
  EXPECT_NEAR(ppInner.time.tpComm, 10 * tpInner.time.tpComm, 1e-9 * ppInner.time.tpComm);
  EXPECT_GT(ppInner.iterationSeconds, tpInner.iterationSeconds);
  job.allowCrossNodeTp = false;
  EXPECT_EQ(checkLayout(job, parseLayout("pp2,tp2,mb1,pp-inner")),
            "pp-inner spreads each tp group of 2 over nodes (tensor parallelism needs the "
            "intra-node link)");
  EXPECT_EQ(checkLayout(job, parseLayout("pp2,tp2,mb1")), "");
}

// Data parallelism's gradients leave in buckets, one message each: a small
// first bucket, then full ones, then the rest. On a link of latency only
// (and compute that takes no time), the exposed sync is 2 latencies per
// bucket for dp 2.
TEST(CostModel, GradientsAllReduceOneMessagePerBucket) {
  TrainingJob job = roundJob(1, 2, 2);
  job.cluster.device.peakFp32Flops = job.cluster.device.peakBf16Flops = 1e30;
  Layout layout = parseLayout("dp2,mb1");
  // The gradients' bytes G: on a link of bandwidth only, dp 2 sends G once.
  job.buckets = {1e30, 1e30};
  double bytes = evaluateLayout(job, layout).time.dpExposed * job.cluster.intraNode.bandwidth;
  job.cluster.intraNode = {1e30, 1e-3};
  auto exposed = [&](GradientBuckets buckets) {
    job.buckets = buckets;
    return evaluateLayout(job, layout).time.dpExposed;
  };
  // (The backward hides a few nanoseconds.)
  EXPECT_NEAR(exposed({1e30, 1e30}), 2e-3, 1e-8);              // all in the first bucket
  EXPECT_NEAR(exposed({1, 1e30}), 4e-3, 1e-8);                 // one byte, then the rest
  EXPECT_NEAR(exposed({1, bytes / 3.5}), 10e-3, 1e-8);         // 1 + 3 full + the rest
  EXPECT_NEAR(exposed({bytes / 3, bytes / 2.2}), 6e-3, 1e-8);  // the first, one full, the rest
}

// Messages past the link's large-message size move at its large-message
// rate: a link whose every byte beyond the first moves at half the rate
// doubles the tensor-parallel all-reduces (the round cluster has no latency).
TEST(CostModel, LargeMessagesMoveAtTheLinksLargeMessageRate) {
  TrainingJob job = roundJob(1, 4, 8);
  Estimate base = evaluateLayout(job, parseLayout("tp4,mb1"));
  job.cluster.intraNode.largeMessageBytes = 1;
  job.cluster.intraNode.largeBandwidth = job.cluster.intraNode.bandwidth / 2;
  Estimate halved = evaluateLayout(job, parseLayout("tp4,mb1"));
  EXPECT_NEAR(halved.time.tpComm, 2 * base.time.tpComm, 1e-6 * base.time.tpComm);
}

// The pipeline's hand-offs cross the cluster's point-to-point path where it
// has one: the same link as the collectives' changes nothing, a slower one
// only the pipeline's waits.
TEST(CostModel, PipelineHandOffsTakeThePointToPointPath) {
  TrainingJob job = roundJob(1, 4, 8);
  job.cluster.intraNode.latency = 1e-3;
  Layout layout = parseLayout("pp2,tp2,mb1,1f1b");
  Estimate base = evaluateLayout(job, layout);
  job.cluster.intraNodeP2p = job.cluster.intraNode;
  EXPECT_DOUBLE_EQ(evaluateLayout(job, layout).iterationSeconds, base.iterationSeconds);
  job.cluster.intraNodeP2p->latency = 0.1;  // a hand-off now takes 0.1 s and more
  Estimate slow = evaluateLayout(job, layout);
  EXPECT_GT(slow.time.bubble, base.time.bubble + 0.1);
  EXPECT_DOUBLE_EQ(slow.time.tpComm, base.time.tpComm);
  job.cluster.interNodeP2p = Link{1, 1};  // a path between nodes, which this layout never takes
  EXPECT_DOUBLE_EQ(evaluateLayout(job, layout).iterationSeconds, slow.iterationSeconds);
}

// A framework that sends hand-offs whole from every tp rank and waits for
// each (DeepSpeed's pipeline engine) holds every stage for its sends: each
// of the 8 micro-batches sends one activation from stage 0 and one gradient
// from stage 1, b*s*h 2-byte values, where the trainer's split hand-offs
// cost no stage anything.
TEST(CostModel, BlockingWholeHandOffsHoldTheSender) {
  TrainingJob job = roundJob(1, 4, 8);
  Layout layout = parseLayout("pp2,tp2,mb1,1f1b");
  Estimate split = evaluateLayout(job, layout);
  EXPECT_EQ(split.time.ppComm, 0);
  job.framework.splitHandOffs = false;
  job.framework.blockingHandOffs = true;
  Estimate blocking = evaluateLayout(job, layout);
  double handOff = 2.0 * 1024 * 1024 / 1e11;  // one sequence of 1024 x 1024 values at 100 GB/s
  EXPECT_NEAR(blocking.time.ppComm, 8 * handOff, 1e-9);
  EXPECT_NEAR(blocking.iterationSeconds, blocking.time.total(), 1e-9 * blocking.iterationSeconds);
  EXPECT_GT(blocking.iterationSeconds, split.iterationSeconds + 8 * handOff);
}

TEST(CostModel, UnevenLayersUseTheBalancedPartitioner) {
  TrainingJob job = roundJob(1, 3, 6);  // 8 layers on 3 stages: 3, 3, 2 or similar
  Estimate e = evaluateLayout(job, parseLayout("pp3,mb1"));
  EXPECT_GT(e.iterationSeconds, 0);
  job.evenStages = true;
  EXPECT_NE(checkLayout(job, parseLayout("pp3,mb1")).find("8 layers do not divide"),
            std::string::npos);
}

TEST(CostModel, CheckLayoutNamesTheValues) {
  TrainingJob job = roundJob(2, 4, 12);
  EXPECT_EQ(checkLayout(job, parseLayout("pp2,tp4,dp2")),
            "pp 2 x tp 4 x dp 2 = 16 devices, but the cluster has 2 nodes x 4 = 8");
  EXPECT_NE(checkLayout(job, parseLayout("tp8,dp1")).find("exceeds the 4 devices of a node"),
            std::string::npos);
  TrainingJob sixHeads = job;
  sixHeads.model.heads = 6;
  EXPECT_NE(checkLayout(sixHeads, parseLayout("tp4,dp2")).find("tp 4 does not divide the 6 heads"),
            std::string::npos);
  EXPECT_NE(checkLayout(job, parseLayout("pp1,tp1,dp8")).find("global batch 12"),
            std::string::npos);
  EXPECT_NE(checkLayout(job, parseLayout("pp2,tp1,dp4,zero2")).find("ZeRO-2"), std::string::npos);
  EXPECT_NE(checkLayout(job, parseLayout("pp2,tp4,v2,1f1b")).find("use interleaved-1f1b"),
            std::string::npos);
  EXPECT_NE(checkLayout(job, parseLayout("pp8,mb1,v2,interleaved-1f1b")).find("8 layers cannot"),
            std::string::npos);
  EXPECT_THROW(evaluateLayout(job, parseLayout("pp1,tp1,dp8")), PlanError);
}

// Llama 3 8B on one node of 8 A100s, 8 sequences a step.
TrainingJob llamaJob(int kvHeads) {
  TrainingJob job;
  job.model = modelPreset("llama3-8b");
  job.model.kvHeads = kvHeads;
  job.cluster = clusterPreset("dgx-a100-80gb-ib200");
  job.globalBatch = 8;
  return job;
}

TEST(CostModel, TensorParallelMustSplitOrReplicateTheKvHeads) {
  TrainingJob job = llamaJob(8);
  EXPECT_EQ(checkLayout(job, parseLayout("tp8,dp1")), "");  // 1 kv head per rank
  job.model.kvHeads = 4;
  EXPECT_EQ(checkLayout(job, parseLayout("tp8,dp1")), "");  // each kv head on 2 ranks
  TrainingJob six = job;
  six.model.heads = 24;
  six.model.hidden = 24 * 128;
  six.model.kvHeads = 6;
  EXPECT_EQ(checkLayout(six, parseLayout("tp2,dp4")), "");
  EXPECT_EQ(checkLayout(six, parseLayout("tp4,dp2")),
            "tp 4 neither divides the 6 kv heads nor is a multiple of them");
  EXPECT_EQ(checkLayout(six, parseLayout("tp8,dp1")),
            "tp 8 neither divides the 6 kv heads nor is a multiple of them");
  TrainingJob oddFfn = job;
  oddFfn.model.ffn = 14340;  // 4 x 3585
  EXPECT_EQ(checkLayout(oddFfn, parseLayout("tp8,dp1")),
            "tp 8 does not divide the 32 heads and ffn 14340");
  EXPECT_THROW(evaluateLayout(six, parseLayout("tp4,dp2")), PlanError);
}

TEST(CostModel, ReplicatedKvProjectionsAreWholeOnEveryRankAndAllReduceTheirGradients) {
  // 4 kv heads over tp 8: k and v (2 x 4096 x 512 = 4,194,304 weights a
  // layer) are whole on every rank, as are the norms. Per rank, with pp 1:
  //   layers 32 x (2*4096^2 + 2*4096*512 + 3*4096*14336) = 6,845,104,128
  //   + embedding 128256*4096 + head 128256*4096 = 1,050,673,152
  //   / 8 = 986,972,160, + 32 x 4,194,304 x 7/8 = 117,440,512 replicated,
  //   + the norms 32 x 2*4096 + 4096 = 266,240 whole
  // dp 2 over two nodes, so that every gradient is held through the step
  // (at dp 1 the trainer releases them before it).
  TrainingJob job = llamaJob(4);
  job.cluster.nodes = 2;
  Layout layout = parseLayout("tp8,dp2,mb1");
  Estimate replicated = evaluateLayout(job, layout);
  double rankParams = 986972160.0 + 117440512.0 + 266240.0;
  EXPECT_DOUBLE_EQ(replicated.memory.parameters, rankParams * job.precision.weightBytes);
  EXPECT_DOUBLE_EQ(replicated.memory.gradients, rankParams * job.precision.gradBytes);
  // Their gradients, 4,194,304 x 2 bytes, are all-reduced over tp in every
  // layer's backward of each of the 4 micro-batches; 8 kv heads split over
  // tp 8 have none. The presets' devices have no compute noise, so the
  // collectives wait for nothing and the rest of tp's traffic is the same.
  TrainingJob splitJob = llamaJob(8);
  splitJob.cluster.nodes = 2;
  Estimate split = evaluateLayout(splitJob, layout);
  double gradAllReduce = allReduceSeconds(4194304.0 * 2, 8, job.cluster.intraNode);
  EXPECT_NEAR(replicated.time.tpComm - split.time.tpComm, 4 * 32 * gradAllReduce,
              1e-9 * split.time.tpComm);
}

TEST(CostModel, GroupedQueryAttentionNeedsLessMemory) {
  Layout layout = parseLayout("tp8,dp1,mb1");
  Estimate gqa = evaluateLayout(llamaJob(8), layout);
  Estimate mha = evaluateLayout(llamaJob(32), layout);
  // 32 layers' k and v shrink from 2 x 4096 x 4096 to 2 x 4096 x 1024, split over tp 8.
  double fewerParams = 32 * 2.0 * 4096 * (4096 - 1024) / 8;
  Precision bf16;
  EXPECT_DOUBLE_EQ(mha.memory.parameters - gqa.memory.parameters, fewerParams * bf16.weightBytes);
  EXPECT_DOUBLE_EQ(mha.memory.optimizer - gqa.memory.optimizer, fewerParams * bf16.optimizerBytes);
  // The trainer expands k and v to every query head, so activations match
  // but for the repeat's int64 indices, 2 x 8 x 4 bytes a layer.
  EXPECT_DOUBLE_EQ(gqa.memory.activations - mha.memory.activations, 32 * 2 * 8 * 4);
  EXPECT_GT(gqa.samplesPerSecond, mha.samplesPerSecond);
}

TEST(Layout, TextFormRoundTrips) {
  Layout l =
      parseLayout("pp8,tp8,dp24,mb2,v2,interleaved-1f1b,zero3,recompute,sp,pp-inner,no-reshard");
  EXPECT_EQ(toString(l),
            "pp8,tp8,dp24,mb2,v2,interleaved-1f1b,zero3,recompute,sp,pp-inner,no-reshard");
  EXPECT_FALSE(l.reshardAfterForward);
  EXPECT_TRUE(parseLayout("zero3").reshardAfterForward);
  EXPECT_EQ(toString(parseLayout(toString(l))), toString(l));
  EXPECT_THROW(parseLayout("pp0"), PlanError);
  EXPECT_THROW(parseLayout("pp8,foo"), PlanError);
  EXPECT_THROW(parseLayout("zero4"), PlanError);
  EXPECT_THROW(parseLayout("zero-1"), PlanError);
  EXPECT_THROW(parseLayout("pp+2"), PlanError);
}

TEST(Layout, DegreeTooLargeForAnIntIsNamed) {
  try {
    parseLayout("pp8,tp99999999999");
    FAIL() << "accepted tp99999999999";
  } catch (const PlanError& error) {
    EXPECT_NE(std::string(error.what()).find("layout item 'tp99999999999' is too large"),
              std::string::npos)
        << error.what();
  }
}

}  // namespace
}  // namespace strata::plan
