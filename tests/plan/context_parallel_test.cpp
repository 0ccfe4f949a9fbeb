// Context parallelism (cp) in the planner: the layout's text and rank order,
// the rules the trainer enforces, and what cp does to memory, time and the
// search. Expected values are worked out here from the sizes, not asked of
// the planner.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "round_job.h"
#include "strata/plan/cost_model.h"
#include "strata/plan/errors.h"
#include "strata/plan/memory.h"
#include "strata/plan/search.h"
#include "tiny_llama.h"

namespace strata::plan {
namespace {

constexpr double kAchieved = 0.5e12;  // the round device's FLOP/s
constexpr double kLayers = 8;

// The round model's attention products on one rank, one sequence, one
// layer's forward: 4 * S^2 * h FLOPs, a cp-th of them.
double attentionSeconds(int cp) { return 4.0 * 1024 * 1024 * 1024 / cp / kAchieved; }

TEST(ContextParallelLayout, TextFormRoundTripsAndNamesBadItems) {
  Layout l = parseLayout("pp2,tp4,cp4,cp-a2a,dp2,mb1");
  EXPECT_EQ(l.cp, 4);
  EXPECT_EQ(l.cpAlgorithm, CpAlgorithm::kAllToAll);
  EXPECT_EQ(l.devices(), 64);
  EXPECT_EQ(toString(l), "pp2,tp4,dp2,cp4,cp-a2a,mb1,v1,1f1b,zero0");
  EXPECT_EQ(toString(parseLayout(toString(l))), toString(l));
  // The ring is the default and goes unwritten; cp 1 reads as before cp.
  Layout ring = parseLayout("pp2,cp8");
  EXPECT_EQ(ring.cpAlgorithm, CpAlgorithm::kRing);
  EXPECT_EQ(toString(ring), "pp2,tp1,dp1,cp8,mb1,v1,1f1b,zero0");
  EXPECT_EQ(parseLayout("cp-a2a,cp-ring").cpAlgorithm, CpAlgorithm::kRing);
  EXPECT_EQ(toString(parseLayout("pp2,tp2,cp1")), "pp2,tp2,dp1,mb1,v1,1f1b,zero0");
  EXPECT_STREQ(cpAlgorithmName(CpAlgorithm::kAllToAll), "all-to-all");
  EXPECT_THROW(parseLayout("cp0"), PlanError);
  try {
    parseLayout("tp2,cp-mesh");
    FAIL() << "accepted cp-mesh";
  } catch (const PlanError& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("layout item 'cp-mesh' is not one of"), std::string::npos) << what;
    EXPECT_NE(what.find("cpN, cp-ring, cp-a2a"), std::string::npos) << what;
  }
}

// The trainer's order: rank = t + tp * (c + cp * (d + dp * p)); pp-inner
// turns it around: rank = p + pp * (d + dp * (c + cp * t)).
TEST(ContextParallelLayout, StridesFollowTheTrainersRankOrder) {
  Layout l = parseLayout("pp2,tp4,cp4,dp2");
  auto rank = [](int t, int c, int d, int p) { return t + 4 * (c + 4 * (d + 2 * p)); };
  EXPECT_EQ(l.tpStride(), rank(1, 0, 0, 0));
  EXPECT_EQ(l.cpStride(), rank(0, 1, 0, 0));
  EXPECT_EQ(l.dpStride(), rank(0, 0, 1, 0));
  EXPECT_EQ(l.ppStride(), rank(0, 0, 0, 1));
  // The dp x cp replicas of a tp rank: c + 4 d runs over 0..7, 4 ranks apart.
  EXPECT_EQ(l.replicas(), 8);
  EXPECT_EQ(l.replicaStride(), 4);
  l.ppInner = true;
  auto inner = [](int t, int c, int d, int p) { return p + 2 * (d + 2 * (c + 4 * t)); };
  EXPECT_EQ(l.ppStride(), inner(0, 0, 0, 1));
  EXPECT_EQ(l.dpStride(), inner(0, 0, 1, 0));
  EXPECT_EQ(l.cpStride(), inner(0, 1, 0, 0));
  EXPECT_EQ(l.tpStride(), inner(1, 0, 0, 0));
  EXPECT_EQ(l.replicaStride(), 2);  // d + 2 c runs over 0..7, 2 ranks apart
}

TEST(ContextParallelRules, CheckLayoutRefusesWhatTheTrainerRefuses) {
  TrainingJob six = roundJob(1, 6, 6);
  EXPECT_EQ(checkLayout(six, parseLayout("cp3,dp2")),
            "seq 1024 is not divisible by 2 x cp 3 = 6 (context parallelism gives each cp rank "
            "two equal chunks of every sequence)");
  EXPECT_EQ(checkLayout(six, parseLayout("cp2,dp3")), "");
  // Sequence parallel splits each cp rank's 1032 / 2 = 516 tokens over tp 8.
  TrainingJob odd = roundJob(2, 8, 16);
  odd.model.seqLen = 1032;
  EXPECT_EQ(checkLayout(odd, parseLayout("tp8,cp2,sp")),
            "seq 1032 / cp 2 = 516 tokens a cp rank are not divisible by tp 8 (sequence "
            "parallel splits each cp rank's tokens)");
  EXPECT_EQ(checkLayout(odd, parseLayout("tp8,cp2")), "");
  EXPECT_EQ(checkLayout(roundJob(1, 8, 8), parseLayout("tp2,cp4,dp2")),
            "pp 1 x tp 2 x cp 4 x dp 2 = 16 devices, but the cluster has 1 nodes x 8 = 8");
  Layout none = parseLayout("cp2");
  none.cp = 0;
  EXPECT_NE(checkLayout(six, none).find("pp, tp, dp, cp, ep, v and mb must all be at least 1"),
            std::string::npos);
}

// Llama 3 8B: 32 heads, 8 kv heads. All-to-all needs cp to divide each tp
// rank's heads and kv heads; the ring does not.
TEST(ContextParallelRules, AllToAllNeedsWholeHeadsOnEveryCpRank) {
  TrainingJob job;
  job.model = modelPreset("llama3-8b");
  job.cluster = clusterPreset("dgx-a100-80gb-ib200");
  job.cluster.nodes = 2;
  job.globalBatch = 8;
  EXPECT_EQ(checkLayout(job, parseLayout("tp4,cp4,cp-a2a")),
            "cp-a2a gives each of the cp 4 ranks whole heads, but each tp rank (tp 4) has 8 "
            "query heads and 2 kv heads; cp must divide both (or use the ring, cp-ring)");
  EXPECT_EQ(checkLayout(job, parseLayout("tp4,cp4")), "");
  EXPECT_EQ(checkLayout(job, parseLayout("tp2,cp4,dp2,cp-a2a")), "");
  // 4 kv heads over tp 8 are replicated: one per rank, which cp 2 cannot split.
  job.model.kvHeads = 4;
  EXPECT_EQ(checkLayout(job, parseLayout("tp8,cp2,cp-a2a")),
            "cp-a2a gives each of the cp 2 ranks whole heads, but each tp rank (tp 8) has 4 "
            "query heads and 1 kv heads; cp must divide both (or use the ring, cp-ring)");
}

// memory_test.cpp's small llama: s 4, hidden 8, 4 heads of d = 2, 2 kv heads
// (kv = 4), ffn 12.
TEST(ContextParallelMemory, TheRingKeepsNothingSequenceSquaredByHand) {
  ModelDesc m = tinyLlama();
  CpAlgorithm ring = CpAlgorithm::kRing;
  // cp 2: 2 tokens a rank, 2-byte values, per token:
  //   the block's two sums in fp32 [8]: 2 * 4*8; each RMSNorm's x/rms and
  //   output [8]: 4 * 2*8; together                                   = 128
  //   rotated Q, the ring's output, o's input [8]:                    3 * 2*8 =  48
  //   rotated K and V unrepeated [4]:                                 2 * 2*4 =  16
  //   gate, up and product [12]:                                      3 * 2*12 = 72
  //   the fp32 log-sum-exp, 4 heads, and the norms' 1/rms:            4*4 + 2*4 = 24
  // and RoPE's tables for the rank's 2 positions, 2 x [2 x 2] (16 bytes).
  EXPECT_DOUBLE_EQ(workingActivationBytes(m, 1, 1, false, 2, ring), 2 * 288 + 16);
  // While a layer runs its backward: its own block's scores, 4 heads x [2 x
  // 2], 16 bytes each; a token, the fp32 dq, expanded k and v, the output's
  // gradient and dv (16h), the k/v block, the arriving one, its gradient and
  // the partial one received (24c), delta (4a); the 2 gradients sent (2 x 8c).
  EXPECT_DOUBLE_EQ(transientAttentionBytes(m, 1, 1, 2, ring),
                   16 * 4 * 2 * 2 + 2 * (16 * 8 + 24 * 4 + 4 * 4 + 2 * 8 * 4));
  // tp 2: one kv head of d 2 a rank, 128 + 24 + 8 + 36 + 8 + 8 = 212; tp 4
  // replicates them (still one head of d 2), 128 + 12 + 8 + 18 + 4 + 8 = 178,
  // and with sequence parallel the fp32 sums and the norms' x/rms split
  // (2 x 4*8 / 4 + 2 x 2*8 / 4) but the two gathered inputs stay whole (2 x 2*8), the 1/rms
  // split: 24 + 32 + 12 + 8 + 18 + 4 + 2 = 100.
  EXPECT_DOUBLE_EQ(workingActivationBytes(m, 1, 2, false, 2, ring), 2 * 212 + 16);
  EXPECT_DOUBLE_EQ(workingActivationBytes(m, 1, 4, false, 2, ring), 2 * 178 + 16);
  EXPECT_DOUBLE_EQ(workingActivationBytes(m, 1, 4, true, 2, ring), 2 * 100 + 16);
  EXPECT_DOUBLE_EQ(transientAttentionBytes(m, 1, 2, 2, ring),
                   16 * 2 * 2 * 2 + 2 * (16 * 4 + 24 * 2 + 4 * 2 + 2 * 8 * 2));
  // All-to-all keeps, per token of the rank, the whole-sequence path's
  // tensors (memory_test.cpp counts 304 bytes a token at cp 1), the tables
  // of its 2 positions (16 bytes), the repeat's indices (64) and the
  // sequence's int64 order and inverse (64); no ring blocks.
  CpAlgorithm a2a = CpAlgorithm::kAllToAll;
  EXPECT_DOUBLE_EQ(workingActivationBytes(m, 1, 1, false, 2, a2a), 2 * 304 + 16 + 64 + 64);
  EXPECT_EQ(transientAttentionBytes(m, 1, 1, 2, a2a), 0);
  EXPECT_EQ(transientAttentionBytes(m, 1, 1, 1, ring), 0);
  // Per-layer recompute keeps the input of the rank's 2 tokens.
  EXPECT_DOUBLE_EQ(stashedActivationBytes(m, 1, 1, false, true, 2, ring), 2 * 2 * 8);
}

TEST(ContextParallelMemory, ActivationsPerRankFallAsOneOverCp) {
  ModelDesc m = modelPreset("llama3-8b");
  m.seqLen = 32768;
  CpAlgorithm ring = CpAlgorithm::kRing, a2a = CpAlgorithm::kAllToAll;
  double whole = workingActivationBytes(m, 1, 8, true);
  double ring2 = workingActivationBytes(m, 1, 8, true, 2, ring);
  double block2 = transientAttentionBytes(m, 1, 8, 2, ring);
  // What its backward holds: one tile of scores (2^20 fp32 entries, 16 bytes
  // each at blockBackward's peak), the k/v gradients sent on (8 bytes a kv
  // column per rank, 128 here, for the whole sequence's tokens however cp
  // cuts it), and per-token working tensors, which fall as 1/cp.
  double tile = 16.0 * (1 << 20), sent = 8.0 * 128 * 32768;
  // All-to-all keeps on every rank the repeat's indices (2 x 8 x 4 bytes)
  // and the sequence's order and inverse; the rest falls as 1/cp.
  double repeat = 2 * 8 * 4, order = 16.0 * 32768;
  for (int cp : {4, 8, 16}) {
    SCOPED_TRACE(cp);
    // Every term the ring keeps is per token: exactly 1/cp.
    EXPECT_NEAR(workingActivationBytes(m, 1, 8, true, cp, ring), ring2 * 2 / cp, 1e-12 * ring2);
    EXPECT_NEAR(transientAttentionBytes(m, 1, 8, cp, ring) - tile - sent,
                (block2 - tile - sent) * 2 / cp, 1e-9 * block2);
    EXPECT_NEAR(workingActivationBytes(m, 1, 8, true, cp, a2a) - repeat - order,
                (whole - repeat) / cp, 1e-12 * whole);
  }
  // Per token of its 16384, tp 8, sequence parallel:
  // the fp32 sums and the norms' x/rms (2 x 4h + 2 x 2h)/8, the two gathered inputs
  // 2 x 2h, Q, the output and o's input 3 x 2h/8, K and V 4 x 128, the MLP
  // 6f/8 (gate, up, product), the log-sum-exp 4 x 32/8 and the norms' 1/rms 2 x 4/8; and RoPE's
  // tables for its positions, 2 x [16384 x 128] values.
  EXPECT_DOUBLE_EQ(ring2,
                   16384.0 * (6144 + 16384 + 3072 + 512 + 10752 + 16 + 1) + 2.0 * 2 * 16384 * 128);
  // Less than half of cp 1's (which keeps no [s, s] probabilities either,
  // the fused kernel's output and log-sum-exp instead): K and V stay at the
  // kv heads' width, not expanded to the query heads.
  EXPECT_LT(ring2, whole / 2);
  // Whole layouts on one DGX H100 (one micro-batch in flight, pp 1): the
  // layers' activations of all-to-all fall to about half from cp 1 to cp 2
  // and from cp 2 to cp 4.
  TrainingJob job;
  job.model = m;
  job.cluster = clusterPreset("dgx-h100-80gb");
  job.globalBatch = 4;
  Estimate cp1 = evaluateLayout(job, parseLayout("tp2,dp4,mb1"));
  Estimate cp2 = evaluateLayout(job, parseLayout("tp2,cp2,dp2,cp-a2a,mb1"));
  Estimate cp4 = evaluateLayout(job, parseLayout("tp2,cp4,cp-a2a,mb1"));
  EXPECT_NEAR(cp2.memory.activations / cp1.memory.activations, 0.5, 0.01);
  EXPECT_NEAR(cp4.memory.activations / cp2.memory.activations, 0.5, 0.01);
}

// The dp x cp ranks hold the same parameters and share ZeRO's shards: cp 4 x
// dp 2 shards like dp 8.
TEST(ContextParallelMemory, ZeroShardsOverDpTimesCp) {
  TrainingJob job = roundJob(1, 8, 8);
  for (const char* zero : {"zero1", "zero3"}) {
    SCOPED_TRACE(zero);
    Estimate cp = evaluateLayout(job, parseLayout(std::string("dp2,cp4,mb4,") + zero));
    Estimate dp = evaluateLayout(job, parseLayout(std::string("dp8,mb1,") + zero));
    EXPECT_DOUBLE_EQ(cp.memory.parameters, dp.memory.parameters);
    EXPECT_DOUBLE_EQ(cp.memory.optimizer, dp.memory.optimizer);
    EXPECT_DOUBLE_EQ(cp.time.optimizer, dp.time.optimizer);
  }
  // ZeRO-1 over 8: the optimizer state of 8 layers and the embedding (V 8 +
  // positions 1024 + final LayerNorm) / 8, at 12 bytes a parameter.
  double h = 1024, f = 4096;
  double params = kLayers * (4 * h * h + 2 * h * f + 9 * h + f) + (8 + 1024) * h + 2 * h;
  EXPECT_DOUBLE_EQ(evaluateLayout(job, parseLayout("dp2,cp4,mb4,zero1")).memory.optimizer,
                   params * 12 / 8);
}

// Ring attention, cp 2 on two devices: each layer's k and v (2 x 512 tokens x
// 1024, bf16) hop once forward; backward they hop once more and each block's
// fp32 gradient hops twice, the last time after the last block.
TEST(ContextParallelTime, RingHopsHideBehindBlocksAndOnlyTheExcessShows) {
  TrainingJob job = roundJob(1, 2, 2);  // 2 micro-batches of 1 sequence
  Layout layout = parseLayout("cp2,mb1");
  double values = 2.0 * 512 * 1024;
  double blockForward = attentionSeconds(2) / 2;
  double blockBackward = 2.5 * attentionSeconds(2) / 2;  // with the scores' recompute
  // A fast link: a hop takes 21 us, a block 2.1 ms. Only the last gradient shows.
  Estimate fast = evaluateLayout(job, layout);
  double gradient = 4 * values / 1e11;
  ASSERT_LT(2 * values / 1e11 + gradient, blockForward);
  EXPECT_NEAR(fast.time.cpComm, 2 * kLayers * gradient, 1e-9 * fast.time.cpComm);
  // Compute: half of every FLOP of the two sequences, and the backward's
  // recompute of the scores, half the attention's forward, per layer.
  double compute =
      trainingFlops(job.model, 2, false) / 2 / kAchieved + 2 * kLayers * attentionSeconds(2) / 2;
  EXPECT_NEAR(fast.time.compute, compute, 1e-6 * compute);
  // A slow link (100 MB/s): hops outlast blocks.
  job.cluster.intraNode = {1e8, 0};
  double hop = 2 * values / 1e8;
  gradient = 4 * values / 1e8;
  ASSERT_GT(hop, blockBackward);
  double perLayer = (hop - blockForward)          // forward: 1 hop behind 1 block
                    + (hop - blockBackward)       // backward step 0: a block's hop
                    + (gradient - blockBackward)  // step 1: the first gradient's
                    + gradient;                   // the last gradient's, home
  Estimate slow = evaluateLayout(job, layout);
  EXPECT_NEAR(slow.time.cpComm, 2 * kLayers * perLayer, 1e-9 * slow.time.cpComm);
  // The two cp ranks also all-reduce their gradients (dp is 1, but the
  // replicas are dp x cp = 2), which the slow link exposes too.
  EXPECT_GT(slow.time.dpExposed, fast.time.dpExposed);
  EXPECT_NEAR(slow.iterationSeconds - fast.iterationSeconds,
              slow.time.cpComm - fast.time.cpComm + slow.time.dpExposed - fast.time.dpExposed,
              1e-6 * slow.iterationSeconds);
}

// cp 4: cp - 1 = 3 hops forward; backward 3 block hops and 4 gradient hops,
// steps 1 and 2 carrying one of each.
TEST(ContextParallelTime, RingOfFourHopsThreeTimesForwardAndFourGradientsBack) {
  TrainingJob job = roundJob(1, 4, 4);
  job.cluster.intraNode = {1e8, 0};
  double values = 2.0 * 256 * 1024;
  double hop = 2 * values / 1e8, gradient = 4 * values / 1e8;
  double blockForward = attentionSeconds(4) / 4, blockBackward = 2.5 * attentionSeconds(4) / 4;
  ASSERT_GT(hop, blockBackward);
  double forward = 3 * (hop - blockForward);
  double backward = (hop - blockBackward) + 2 * (hop + gradient - blockBackward) +
                    (gradient - blockBackward) + gradient;
  Estimate e = evaluateLayout(job, parseLayout("cp4,mb1"));
  ASSERT_EQ(e.microBatches, 4);
  EXPECT_NEAR(e.time.cpComm, 4 * kLayers * (forward + backward), 1e-9 * e.time.cpComm);
}

// All-to-all, cp 4: four exchanges each way per layer, each of a rank's
// [256 tokens x 1024] bf16 tensor, 3/4 of which leaves in 3 messages.
TEST(ContextParallelTime, AllToAllMovesThreeQuartersOfEachTensorFourTimesEachWay) {
  TrainingJob job = roundJob(1, 4, 4);
  job.cluster.intraNode = {1e11, 1e-6};
  double bytes = 2.0 * 256 * 1024;
  double exchange = 0.75 * bytes / 1e11 + 3 * 1e-6;
  Estimate e = evaluateLayout(job, parseLayout("cp4,cp-a2a,mb1"));
  EXPECT_NEAR(e.time.cpComm, 4 * kLayers * 8 * exchange, 1e-9 * e.time.cpComm);
  // No recompute of scores: a quarter of every FLOP.
  double compute = trainingFlops(job.model, 4, false) / 4 / kAchieved;
  EXPECT_NEAR(e.time.compute, compute, 1e-6 * compute);
  // Across two nodes of two the group takes the 10x slower link.
  TrainingJob nodes = roundJob(2, 2, 4);
  Estimate across = evaluateLayout(nodes, parseLayout("cp4,cp-a2a,mb1"));
  EXPECT_NEAR(across.time.cpComm, 4 * kLayers * 8 * (0.75 * bytes / 1e10),
              1e-9 * across.time.cpComm);
  // tp 2 x cp 2 fits a node of four: the cp group, 2 ranks apart, stays inside.
  TrainingJob inside = roundJob(2, 4, 4);
  Estimate tpcp = evaluateLayout(inside, parseLayout("tp2,cp2,dp2,cp-a2a,mb1"));
  double half = 2.0 * 512 * 1024 / 2;  // 512 tokens x 1024 / tp 2
  EXPECT_NEAR(tpcp.time.cpComm, 2 * kLayers * 8 * (0.5 * half / 1e11), 1e-9 * tpcp.time.cpComm);
}

// cp 1 with either algorithm is the layout without cp, to the last bit.
TEST(ContextParallelTime, CpOneChangesNothing) {
  TrainingJob job = roundJob(1, 8, 8);
  Estimate plain = evaluateLayout(job, parseLayout("pp2,tp2,dp2,mb1,zero1"));
  Estimate cp1 = evaluateLayout(job, parseLayout("pp2,tp2,dp2,cp1,cp-a2a,mb1,zero1"));
  EXPECT_EQ(cp1.iterationSeconds, plain.iterationSeconds);
  EXPECT_EQ(cp1.memory.total(), plain.memory.total());
  EXPECT_EQ(cp1.time.cpComm, 0);
}

SearchOptions quickCpSearch() {
  SearchOptions o;
  o.microBatchSizes = {1, 2};
  return o;
}

// Llama 3 8B on sequences of 2^20 tokens: at cp 1 even the layer inputs
// recompute keeps and one layer's working tensors outgrow an H100 under
// every sharding of 64 of them.
TEST(ContextParallelSearch, ASequenceThatFitsNowhereElseGetsCp) {
  TrainingJob job;
  job.model = modelPreset("llama3-8b");
  job.model.seqLen = 1048576;
  job.cluster = clusterPreset("dgx-h100-80gb");
  job.cluster.nodes = 8;
  job.globalBatch = 8;
  SearchResult r = searchLayouts(job, quickCpSearch());
  ASSERT_FALSE(r.best.empty());
  for (const Estimate& e : r.best) {
    EXPECT_GT(e.layout.cp, 1) << toString(e.layout);
    EXPECT_TRUE(e.fitsMemory);
    EXPECT_EQ(checkLayout(job, e.layout), "") << toString(e.layout);
  }
  SearchOptions noCp = quickCpSearch();
  noCp.maxContextParallel = 1;
  try {
    searchLayouts(job, noCp);
    FAIL() << "a cp 1 layout fits";
  } catch (const PlanError& e) {
    EXPECT_NE(std::string(e.what()).find("cluster too small"), std::string::npos) << e.what();
  }
}

TEST(ContextParallelSearch, ShortSequencesKeepCpOne) {
  TrainingJob job;
  job.model = modelPreset("gpt2-medium");  // 1024 tokens
  job.cluster = clusterPreset("dgx-a100-80gb-ib200");
  job.cluster.nodes = 2;
  job.globalBatch = 64;
  // DualPipeV's pairs hide cp's exchanges as they hide tp's all-reduces,
  // which leaves cp and tp all but tied there; the schedules without pairs
  // show cp's cost.
  SearchOptions options = quickCpSearch();
  options.schedules = {"1f1b", "interleaved-1f1b", "zb-h1", "zb-v", "gpipe"};
  SearchResult r = searchLayouts(job, options);
  ASSERT_FALSE(r.best.empty());
  EXPECT_EQ(r.best.front().layout.cp, 1) << toString(r.best.front().layout);
  // cp layouts were tried, and some fit: they just ran slower.
  SearchOptions noCp = options;
  noCp.maxContextParallel = 1;
  SearchResult without = searchLayouts(job, noCp);
  EXPECT_GT(r.considered, without.considered);
  EXPECT_GT(r.fitting, without.fitting);
  EXPECT_EQ(toString(r.best.front().layout), toString(without.best.front().layout));
}

}  // namespace
}  // namespace strata::plan
