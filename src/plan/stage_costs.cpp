#include "stage_costs.h"

#include <algorithm>
#include <tuple>

#include "layer_traffic.h"
#include "strata/plan/comm.h"
#include "strata/plan/errors.h"
#include "strata/plan/partition.h"

namespace strata::plan {
namespace {

// Seconds of one transformer layer on one micro-batch: its forward and
// backward compute, and the forward's two tensor-parallel all-reduces of b*s*h
// activation values (with sequence parallel: a reduce-scatter and an
// all-gather each, the same volume and so the same alpha-beta cost). Those
// collectives also wait for the tp rank behind (comm.h): the waits of the
// forward's and the backward's collectives, which follow their compute.
// Replicated k and v projections (model_desc.h's kvReplicated) add one more
// collective to the backward: their weights' gradient all-reduce over tp.
// An MoE layer's MLP reduces its experts' rows over tp (top_k a token) and
// its shared experts' output, and trades tokens over ep (withExpertParallel).
struct LayerTime {
  double forward = 0;
  double backward = 0;
  double tpComm = 0;
  double tpWaitForward = 0;
  double tpWaitBackward = 0;
  double tpWeightGradComm = 0;
  // Context parallelism's traffic that each direction leaves exposed, and
  // its waits for the cp group's slowest rank (see withContextParallel).
  double cpForward = 0;
  double cpBackward = 0;
  double cpWaitForward = 0;
  double cpWaitBackward = 0;
  // Expert parallelism's all-to-alls, on the critical path, with their waits
  // for the ep group's slowest rank (see withExpertParallel).
  double epForward = 0;
  double epBackward = 0;
};

// Forward and backward compute of the work a stage does besides its layers
// (the embedding on the first stage, logits and loss on the last).
struct EndWork {
  double forward = 0;
  double backward = 0;
};

// The tokens of each sequence a rank holds: S / cp (checkLayout makes it whole).
double rankTokens(const ModelDesc& m, const Layout& l) { return double(m.seqLen / l.cp); }

// The b*s*h all-reduces of one direction of a layer: attention's and the
// MLP's, or an MoE MLP's (moe_mlp.cpp) reduction of its experts' partial
// outputs, top_k rows a token (balanced routing), and its shared experts'.
double tpAllReduces(const TrainingJob& job, const Layout& l, double valueBytes, LayerKind kind) {
  const ModelDesc& m = job.model;
  double activationBytes = valueBytes * l.microBatch * rankTokens(m, l) * m.hidden;
  const Link& link = groupLink(job.cluster, l.tpStride(), l.tp);
  double mlp = kind == LayerKind::kMoe ? m.moe.topK + (m.moe.sharedExperts > 0 ? 1 : 0) : 1;
  return (1 + mlp) * allReduceSeconds(activationBytes, l.tp, link);
}

// Replicated k and v weights are summed over tp in every micro-batch's
// backward (their gradient is partial on each rank), one all-reduce of both
// matrices' gradients. It follows the backward's other collective, so it
// is given no wait of its own.
double kvGradientAllReduce(const TrainingJob& job, const Layout& l) {
  if (!kvReplicated(job.model, l.tp)) return 0;
  double bytes = kvProjectionParameters(job.model) * job.precision.gradBytes;
  return allReduceSeconds(bytes, l.tp, groupLink(job.cluster, l.tpStride(), l.tp));
}

// A layer of `forward` and `backward` compute seconds with its tensor-parallel
// collectives, activations of `valueBytes` a value. Each direction's
// collectives gather at two points (attention's, the MLP's), after about half
// its compute each.
LayerTime withTpCollectives(double forward, double backward, double valueBytes,
                            const TrainingJob& job, const Layout& l,
                            LayerKind kind = LayerKind::kDense) {
  const ComputeNoise& noise = job.cluster.device.noise;
  LayerTime layer;
  layer.forward = forward;
  layer.backward = backward;
  layer.tpComm = tpAllReduces(job, l, valueBytes, kind);
  layer.tpWaitForward = 2 * syncWaitSeconds(forward / 2, l.tp, noise);
  layer.tpWaitBackward = 2 * syncWaitSeconds(backward / 2, l.tp, noise);
  layer.tpWeightGradComm = kvGradientAllReduce(job, l);
  return layer;
}

// Ring attention's traffic left exposed in one layer, {forward, backward}
// (ring_attention.h). Forward: cp steps, each computing one block while the
// next block (`hop`) travels one hop; a hop longer than its block shows its
// excess, cp - 1 times. Backward: the blocks travel again, cp - 1 hops, and
// each block's fp32 key/value gradient (`gradientHop`) follows one step
// behind it, cp hops back to its owner: step 0 hides a block's hop, steps 1
// to cp - 2 a block's and a gradient's (one link, so their times add), the
// last step a gradient's; the last gradient's hop home comes after the last
// block, with nothing left to hide behind.
std::pair<double, double> ringExposedSeconds(double hop, double gradientHop, double blockForward,
                                             double blockBackward, int cp) {
  double forward = (cp - 1) * std::max(0.0, hop - blockForward);
  double backward = std::max(0.0, hop - blockBackward) +
                    (cp - 2) * std::max(0.0, hop + gradientHop - blockBackward) +
                    std::max(0.0, gradientHop - blockBackward) + gradientHop;
  return {forward, backward};
}

// One direction's four all-to-alls (all_to_all_attention.h): q and the
// output, b*s*h/t values each, and k and v unrepeated, b*s*c each; backward
// sends their gradients, the same sizes, the other way.
double allToAllsSeconds(const TrainingJob& job, const Layout& l, double valueBytes,
                        const Link& link) {
  const ModelDesc& m = job.model;
  double tokens = l.microBatch * rankTokens(m, l);
  double queries = valueBytes * tokens * m.hidden / l.tp;
  double keys = valueBytes * tokens * kvColumnsPerRank(m, l.tp);
  return 2 * allToAllSeconds(queries, l.cp, link) + 2 * allToAllSeconds(keys, l.cp, link);
}

// Adds context parallelism to a layer whose attention products (scores and
// weighted sum) take `attentionForward` of its forward. The cp group's
// exchanges are the trainer's point-to-point sends, so they take the p2p path
// of the link the group crosses. Ring: every hop of k and v (2*b*s*c values,
// s = S/cp) hides behind one block, a 1/cp share of the attention; backward
// recomputes each block's scores (one more product of the two, half the
// forward's) and its gradients travel in fp32 (ringExposedSeconds).
// All-to-all: four exchanges each way, on the critical path. Either way the
// group synchronises entering and leaving attention, each after about half
// the direction's compute, and waits for its slowest rank there, as tp does.
LayerTime withContextParallel(LayerTime layer, double attentionForward, double valueBytes,
                              const TrainingJob& job, const Layout& l) {
  if (l.cp == 1) return layer;
  const ModelDesc& m = job.model;
  const Link& link = groupPointToPointLink(job.cluster, l.cpStride(), l.cp);
  if (l.cpAlgorithm == CpAlgorithm::kAllToAll) {
    layer.cpForward = layer.cpBackward = allToAllsSeconds(job, l, valueBytes, link);
  } else {
    double recompute = attentionForward / 2;
    layer.backward += recompute;
    double kvValues = 2 * l.microBatch * rankTokens(m, l) * kvColumnsPerRank(m, l.tp);
    double hop = pointToPointSeconds(valueBytes * kvValues, link);
    double gradientHop = pointToPointSeconds(4 * kvValues, link);
    double blockForward = attentionForward / l.cp;
    double blockBackward = (2 * attentionForward + recompute) / l.cp;
    std::tie(layer.cpForward, layer.cpBackward) =
        ringExposedSeconds(hop, gradientHop, blockForward, blockBackward, l.cp);
  }
  const ComputeNoise& noise = job.cluster.device.noise;
  layer.cpWaitForward = 2 * syncWaitSeconds(layer.forward / 2, l.cp, noise);
  layer.cpWaitBackward = 2 * syncWaitSeconds(layer.backward / 2, l.cp, noise);
  return layer;
}

// Adds expert parallelism to an MoE layer (token_exchange.cpp): the forward
// exchanges the rows each rank sends each expert (E int64 counts, tiny),
// then dispatches the b*s*k rows of h values of its tokens' assignments by
// one all-to-all and brings the experts' outputs back by another; the
// backward sends the gradients of both the other way, two more. Each is
// (ep - 1)/ep of the rows out of every rank, none overlapped with compute.
// They are the trainer's point-to-point sends, so they take the p2p path of
// the link the ep group crosses (ep consecutive replicas, epStride() apart).
// The group waits for its slowest rank at the dispatch and the combine, each
// after about half the direction's compute, as tp does.
LayerTime withExpertParallel(LayerTime layer, double valueBytes, const TrainingJob& job,
                             const Layout& l) {
  if (l.ep == 1) return layer;
  const ModelDesc& m = job.model;
  const Link& link = groupPointToPointLink(job.cluster, l.epStride(), l.ep);
  double rows = valueBytes * l.microBatch * rankTokens(m, l) * m.moe.topK * m.hidden;
  double counts = 8.0 * m.moe.experts;
  double exchanges = 2 * allToAllSeconds(rows, l.ep, link);
  const ComputeNoise& noise = job.cluster.device.noise;
  layer.epForward = allToAllSeconds(counts, l.ep, link) + exchanges +
                    2 * syncWaitSeconds(layer.forward / 2, l.ep, noise);
  layer.epBackward = exchanges + 2 * syncWaitSeconds(layer.backward / 2, l.ep, noise);
  return layer;
}

// The share of a layer's forward FLOPs in its attention products, 4*b*S^2*h
// of layerForwardFlops (model_desc.h): what a measured block spends there.
double attentionShare(const ModelDesc& m) {
  double s = m.seqLen;
  return 4 * s * s * m.hidden / layerForwardFlops(m, 1);
}

// The element-wise bytes of ring attention's block scores, which it computes
// but does not keep: the rank's 1/cp share of the layer's score matrices,
// priced per entry as the whole-sequence path's kept ones are
// (scoreTrafficBytes), so that the ring's softmax costs what cp = 1's does.
double ringScoreBytes(const ModelDesc& m, const Layout& l) {
  if (l.cp == 1 || l.cpAlgorithm != CpAlgorithm::kRing) return 0;
  return scoreTrafficBytes(m, l.microBatch, l.tp) / l.cp;
}

// From FLOPs: the matmuls at peak x efficiency, a backward of twice the
// forward's FLOPs. Under cp a rank computes 1/cp of everything: its S/cp
// tokens' projections and MLP, and a 1/cp share of the attention products
// (counted, as at cp = 1, over the whole square of scores). An MoE layer
// runs its active FLOPs: its tokens' top_k experts, the shared ones and the
// router.
LayerTime layerFromFlops(const TrainingJob& job, const Layout& l, LayerKind kind) {
  const ModelDesc& m = job.model;
  const DeviceSpec& device = job.cluster.device;
  double flops = tpRankLayerForwardFlops(m, l.microBatch, l.tp, kind) / l.cp;
  double achieved = job.cluster.achievedFlops(job.dtype);
  double matmul = flops / achieved;
  // The element-wise work between the matmuls (norms, softmax, GeLU or SiLU,
  // dropout, residual adds) is bound by memory bandwidth (layer_traffic.h).
  double kept =
      layerTrafficBytes(m, l.microBatch, l.tp, l.sequenceParallel, l.cp, l.cpAlgorithm, kind);
  double traffic = 2 * (kept + ringScoreBytes(m, l));
  double forward = matmul + traffic / device.memoryBandwidth;
  double s = m.seqLen;
  double attention = 4 * l.microBatch * s * s * m.hidden / l.tp / l.cp / achieved;
  LayerTime layer = withTpCollectives(forward, 2 * forward, 2, job, l, kind);
  layer = withContextParallel(layer, attention, 2, job, l);
  return kind == LayerKind::kMoe ? withExpertParallel(layer, 2, job, l) : layer;
}

// How much a measured time stretches under `l` for sharing the node: with k
// of the node's n devices busy, the slowdown grows linearly from 1 (k = 1)
// to the measured all-busy factor (k = n):
//   sharing = 1 + (slowdown - 1) (k - 1) / (n - 1)
double nodeSharing(const TrainingJob& job, const MeasuredProfile& p, const Layout& l) {
  int perNode = job.cluster.devicesPerNode;
  int busy = std::min(l.devices(), perNode);
  return perNode > 1 ? 1 + (p.concurrentSlowdown - 1) * (busy - 1) / (perNode - 1) : 1;
}

// The share of the tokens profiled that a rank's micro-batch holds under `l`:
// b / b_profiled, and under cp its S/cp of every sequence.
double tokenRatio(const MeasuredProfile& p, const Layout& l) {
  return double(l.microBatch) / p.microBatch / l.cp;
}

// A measured time, `one` on the profiled tokens and `half` on half of them
// (0: not measured), on `ratio` times the tokens: a part f that stays and a
// part that scales, t(r) = one (f + (1 - f) r), with f from the half point,
// half = one (f + (1 - f) / 2). Without it, f = 0: linear in the tokens.
double onTokens(double one, double half, double ratio) {
  double fixed = half > 0 ? std::clamp(2 * half / one - 1, 0.0, 1.0) : 0.0;
  return one * (fixed + (1 - fixed) * ratio);
}

// The share of a block's one-device time each of `tp` ranks spends. Only the
// matmuls and attention divide; layer norms, residual adds and dropout run
// whole on every rank. A measured tp = 2 shard time t2 gives the replicated
// share r from t2 = t1 ((1 - r) / 2 + r), and then
//   t(tp) = t1 ((1 - r) / tp + r);
// without one, r = 0.
double blockShare(double one, double two, int tp) {
  if (tp == 1 || two <= 0) return 1.0 / tp;
  double replicated = std::clamp(2 * two / one - 1, 0.0, 1.0);
  return (1 - replicated) / tp + replicated;
}

void requireSameModel(const ModelDesc& job, const ModelDesc& p) {
  if (job.family == p.family && job.layers == p.layers && job.hidden == p.hidden &&
      job.heads == p.heads && job.keyValueHeads() == p.keyValueHeads() && job.ffn == p.ffn &&
      job.vocab == p.vocab && job.seqLen == p.seqLen)
    return;
  // A GPT names neither its family nor its kv heads (as many as its heads).
  auto dims = [](const ModelDesc& m) {
    bool llama = m.family == Family::kLlama;
    return std::string(llama ? "llama, " : "") + "layers " + std::to_string(m.layers) +
           ", hidden " + std::to_string(m.hidden) + ", heads " + std::to_string(m.heads) +
           (llama ? ", kv heads " + std::to_string(m.keyValueHeads()) : "") + ", ffn " +
           std::to_string(m.ffn) + ", vocab " + std::to_string(m.vocab) + ", seq " +
           std::to_string(m.seqLen);
  };
  throw PlanError("the measured profile is of a different model (" + dims(p) +
                  ") than the job's (" + dims(job) + ")");
}

EndWork scaled(const LayerSeconds& measured, double stretch) {
  return {measured.forward * stretch, measured.backward * stretch};
}

// Forward F and backward B. Split, the backward's input gradients (I) are
// half its compute, and carry its all-reduces (waiting for half the
// backward's spread) and any recompute, on the critical path. Strata's W
// runs only the weight-gradient products, from the gradients I kept
// (pipeline/split_backward.h): the other half. Under ZeRO-3 (`rewalk`) W
// walks the stage's graph again from its output instead, recomputing the
// activation gradients inside the stage, so it costs about a whole
// backward: I + W is 1.5 B (`rewalk` is the extra half). The weight
// gradients' own all-reduce (replicated k and v) belongs to W.
StageTime stageTime(double layers, const LayerTime& layer, const EndWork& ends, bool recompute,
                    bool rewalk) {
  StageTime t;
  double forward = layers * layer.forward + ends.forward;
  double backward = layers * layer.backward + ends.backward;
  double forwardComm = layers * (layer.tpComm + layer.tpWaitForward);
  double transfers = layers * layer.tpComm, backwardWait = layers * layer.tpWaitBackward;
  double weightGrads = layers * layer.tpWeightGradComm;
  // Context parallelism's exposed traffic sits inside attention, expert
  // parallelism's inside the MLP: the forward's in F (and again in full
  // recompute's forward), the backward's on the way to the input gradients.
  double cpForward = layers * (layer.cpForward + layer.cpWaitForward);
  double cpBackward = layers * (layer.cpBackward + layer.cpWaitBackward);
  double epForward = layers * layer.epForward, epBackward = layers * layer.epBackward;
  double redo = recompute ? layers * layer.forward : 0;
  double redoComm = recompute ? forwardComm : 0;
  double redoCp = recompute ? cpForward : 0;
  double redoEp = recompute ? epForward : 0;
  t.compute = forward + backward;
  t.recompute = redo;
  t.tpComm = forwardComm + transfers + backwardWait + weightGrads + redoComm;
  t.cpComm = cpForward + cpBackward + redoCp;
  t.epComm = epForward + epBackward + redoEp;
  t.rewalk = rewalk ? backward / 2 : 0;
  t.costs.forward = forward + forwardComm + cpForward + epForward;
  t.costs.backwardInput = backward / 2 + transfers + backwardWait / 2 + redo + redoComm +
                          cpBackward + redoCp + epBackward + redoEp;
  t.costs.backwardWeight = backward / 2 + t.rewalk + weightGrads;
  t.costs.backward = backward + transfers + backwardWait + weightGrads + redo + redoComm +
                     cpBackward + redoCp + epBackward + redoEp;
  return t;
}

// Two stages' work as one: a stage's dense layers and its MoE layers.
StageTime sum(StageTime a, const StageTime& b) {
  a.compute += b.compute;
  a.recompute += b.recompute;
  a.tpComm += b.tpComm;
  a.cpComm += b.cpComm;
  a.epComm += b.epComm;
  a.rewalk += b.rewalk;
  a.costs.forward += b.costs.forward;
  a.costs.backward += b.costs.backward;
  a.costs.backwardInput += b.costs.backwardInput;
  a.costs.backwardWeight += b.costs.backwardWeight;
  return a;
}

// The per-layer time, a dense layer's and an MoE layer's, and the first and
// last stage's extra work of a layout.
struct LayoutWork {
  LayerTime layer;
  LayerTime moeLayer;
  EndWork embedding;
  EndWork head;

  const LayerTime& of(LayerKind kind) const { return kind == LayerKind::kMoe ? moeLayer : layer; }
};

// Measured times follow the rank's tokens (tokenRatio: the micro-batch, and
// under cp its S/cp of every sequence): the embedding and the head in
// proportion, a block by onTokens, which keeps the part the profile's
// half-batch point shows does not shrink. Under cp a block's share of the
// attention products (attentionShare of it) is what the ring splits. A
// measured profile is of a GPT (requireSameModel refuses any other job), so
// it has no MoE layer to time.
LayoutWork layoutWork(const TrainingJob& job, const Layout& l) {
  if (!job.profile) {
    double logits = logitsForwardFlops(job.model, l.microBatch) / l.tp / l.cp /
                    job.cluster.achievedFlops(job.dtype);
    LayerTime moe = job.model.moe.enabled() ? layerFromFlops(job, l, LayerKind::kMoe) : LayerTime{};
    return {layerFromFlops(job, l, LayerKind::kDense), moe, {}, {logits, 2 * logits}};
  }
  const MeasuredProfile& p = *job.profile;
  requireSameModel(job.model, p.model);
  double sharing = nodeSharing(job, p, l), ratio = tokenRatio(p, l);
  double stretch = sharing * ratio;
  EndWork block = {sharing * onTokens(p.block.forward, p.blockHalf.forward, ratio) *
                       blockShare(p.block.forward, p.blockTp2.forward, l.tp),
                   sharing * onTokens(p.block.backward, p.blockHalf.backward, ratio) *
                       blockShare(p.block.backward, p.blockTp2.backward, l.tp)};
  double valueBytes = activationValueBytes(p);
  LayerTime layer = withTpCollectives(block.forward, block.backward, valueBytes, job, l);
  layer = withContextParallel(layer, attentionShare(job.model) * block.forward, valueBytes, job, l);
  return {layer, {}, scaled(p.embedding, stretch / l.tp), scaled(p.head, stretch / l.tp)};
}

// Layers per stage: equal when they divide (as the trainer's even cut),
// otherwise the balanced partitioner's contiguous cut over per-layer time
// (forward + backward, each layer at its kind's), the logits counted with the
// last layer so the last stage gets fewer layers.
std::vector<int> stageLayerCounts(const ModelDesc& m, int stages, const LayoutWork& work,
                                  bool recompute) {
  if (m.layers % stages == 0) return std::vector<int>(stages, m.layers / stages);
  auto seconds = [](const StageTime& t) { return t.costs.forward + t.costs.backward; };
  std::vector<LayerCost> layers;
  for (int i = 0; i < m.layers; ++i) {
    LayerKind kind = m.moe.isMoeLayer(i) ? LayerKind::kMoe : LayerKind::kDense;
    layers.push_back({seconds(stageTime(1, work.of(kind), {}, recompute, false)), 0});
  }
  layers.back().seconds += seconds(stageTime(0, work.layer, work.head, false, false));
  return partitionBalanced(layers, stages).counts();
}

// DualPipeV issues one micro-batch's forward together with another's
// backward so that each one's communication runs under the other's compute
// (DeepSeek-V3 technical report, 2024, section 3.2.1). What a pair can hide
// is its communication: the stages' exposed tensor-, context- and
// expert-parallel traffic. The simulator hides overlap x min(F, B) of a
// pair, one share for every stage, so the share is that traffic over
// min(F, B), both summed over the stages, at most all of it.
double pairOverlap(const std::vector<StageTime>& stages) {
  double traffic = 0, shorter = 0;
  for (const StageTime& t : stages) {
    traffic += t.tpComm + t.cpComm + t.epComm;
    shorter += std::min(t.costs.forward, t.costs.backward);
  }
  return shorter > 0 ? std::min(1.0, traffic / shorter) : 0;
}

// One activation's hand-off between pipeline ranks: b*s*h values (s the
// rank's S/cp tokens), of which each tp rank sends its 1/tp, or all of them
// when the framework does not split hand-offs (cost_model.h's Framework).
double handOffSeconds(const TrainingJob& job, const Layout& l) {
  if (l.pp == 1) return 0;
  const ModelDesc& m = job.model;
  double valueBytes = job.profile ? activationValueBytes(*job.profile) : 2;
  double bytes = valueBytes * l.microBatch * rankTokens(m, l) * m.hidden;
  if (job.framework.splitHandOffs) bytes /= l.tp;
  return pointToPointSeconds(bytes, groupPointToPointLink(job.cluster, l.ppStride(), l.pp));
}

// A blocking send holds its sender for the hand-off: a stage's forward for
// the activation it sends the next stage's rank, its backward for the
// gradient it sends the previous one's (none where they share a rank).
void addBlockingSends(StagePlan& plan) {
  size_t stages = plan.stages.size();
  for (size_t s = 0; s < stages; ++s) {
    StageTime& t = plan.stages[s];
    bool sendsForward = s + 1 < stages && plan.stageRank[s + 1] != plan.stageRank[s];
    bool sendsBackward = s > 0 && plan.stageRank[s - 1] != plan.stageRank[s];
    double forward = sendsForward ? plan.p2pSeconds : 0;
    double backward = sendsBackward ? plan.p2pSeconds : 0;
    t.ppComm = forward + backward;
    t.costs.forward += forward;
    t.costs.backward += backward;
    t.costs.backwardInput += backward;
  }
}

}  // namespace

StagePlan planStages(const TrainingJob& job, const Layout& l) {
  const ModelDesc& m = job.model;
  int stages = pipelineStages(l);
  StagePlan plan;
  plan.stageRank = stageRanks(l);
  plan.rankParams.assign(l.pp, 0.0);
  plan.rankExpertParams.assign(l.pp, 0.0);
  LayoutWork work = layoutWork(job, l);
  std::vector<int> counts = stageLayerCounts(m, stages, work, l.recompute);
  double wordEmbedding = double(m.vocab) * m.hidden;
  double vocabRows =
      paddedVocab(m, l.tp) / l.tp * m.hidden;  // of the embedding or head, a tp rank's
  int first = 0;                               // the stage's first layer
  for (int s = 0; s < stages; first += counts[s], ++s) {
    bool last = s == stages - 1;
    EndWork ends;
    if (s == 0) ends = work.embedding;
    if (last) ends = {ends.forward + work.head.forward, ends.backward + work.head.backward};
    int moe = moeLayersIn(m, first, counts[s]);
    StageLayers layers{counts[s] - moe, moe};
    plan.stageLayers.push_back(layers);
    bool rewalk = l.zeroStage == 3;
    plan.stages.push_back(sum(stageTime(layers.dense, work.layer, ends, l.recompute, rewalk),
                              stageTime(layers.moe, work.moeLayer, {}, l.recompute, rewalk)));
    // The first stage owns the embeddings: the word embedding's rows split
    // over tp, the positions (GPT) whole. The last owns the final norm,
    // whole on every tp rank, and the logits' weights: a copy of the word
    // embedding when tied (kept in sync by a small all-reduce), which the
    // first stage's rank already holds when it runs the last stage too (one
    // stage, or the V's rank 0), or the untied head's own. A layer's share
    // is tpRankLayerParameters's: norms, row-parallel biases and replicated
    // k and v weights whole, an MoE layer's E/ep experts and router.
    int rank = plan.stageRank[s];
    double params = layers.dense * tpRankLayerParameters(m, LayerKind::kDense, l.tp, l.ep) +
                    layers.moe * tpRankLayerParameters(m, LayerKind::kMoe, l.tp, l.ep);
    if (s == 0)
      params += embeddingParameters(m) - finalNormParameters(m) - wordEmbedding + vocabRows;
    if (last) params += finalNormParameters(m);
    plan.modelParams += params + (last && !m.tiedEmbeddings ? vocabRows : 0);
    if (last && (rank != plan.stageRank[0] || !m.tiedEmbeddings)) params += vocabRows;
    plan.rankParams[rank] += params;
    plan.rankExpertParams[rank] += layers.moe * tpRankExpertParameters(m, l.tp, l.ep);
  }
  plan.p2pSeconds = handOffSeconds(job, l);
  if (job.framework.blockingHandOffs) addBlockingSends(plan);
  if (l.schedule == "dualpipe-v") plan.overlap = pairOverlap(plan.stages);
  return plan;
}

std::vector<int> stagesOn(const StagePlan& plan, int rank) {
  std::vector<int> out;
  for (size_t s = 0; s < plan.stageRank.size(); ++s)
    if (plan.stageRank[s] == rank) out.push_back(static_cast<int>(s));
  return out;
}

std::pair<double, double> rankMicroBatchSeconds(const StagePlan& plan, int rank) {
  double both = 0, backward = 0;
  for (int s : stagesOn(plan, rank)) {
    both += plan.stages[s].costs.forward + plan.stages[s].costs.backward;
    backward += plan.stages[s].costs.backward;
  }
  return {both, backward};
}

int rankLayers(const StagePlan& plan, int rank) {
  int layers = 0;
  for (int s : stagesOn(plan, rank)) layers += plan.stageLayers[s].dense + plan.stageLayers[s].moe;
  return layers;
}

std::pair<double, double> replicatedParams(const Layout& l, const StagePlan& plan, int rank) {
  double experts = l.ep > 1 ? plan.rankExpertParams[rank] : 0;
  return {plan.rankParams[rank] - experts, experts};
}

}  // namespace strata::plan
