#include "stage_costs.h"

#include <algorithm>

#include "layer_time.h"
#include "strata/plan/comm.h"
#include "strata/plan/errors.h"
#include "strata/plan/partition.h"

namespace strata::plan {
namespace {

// Forward and backward compute of the work a stage does besides its layers
// (the embedding on the first stage, logits and loss on the last).
struct EndWork {
  double forward = 0;
  double backward = 0;
};

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
    // A frozen head (LoRA's) makes no weight's gradient: its backward is one product.
    double headBackward = job.model.lora.enabled ? logits : 2 * logits;
    return {layerFromFlops(job, l, LayerKind::kDense), moe, {}, {logits, headBackward}};
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
  plan.frozenBase = m.lora.enabled;
  plan.rankAdapterParams.assign(l.pp, 0.0);
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
    if (last && (rank != plan.stageRank[0] || !m.tiedEmbeddings)) params += vocabRows;
    double adapters = layers.dense * loraLayerParameters(m, l.tp) +
                      layers.moe * loraLayerParameters(m, l.tp, LayerKind::kMoe, l.ep);
    plan.rankParams[rank] += params + adapters;
    plan.rankAdapterParams[rank] += adapters;
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
  if (plan.frozenBase) return {plan.rankAdapterParams[rank], 0.0};
  return shardedParams(l, plan, rank);
}

std::pair<double, double> shardedParams(const Layout& l, const StagePlan& plan, int rank) {
  double experts = l.ep > 1 ? plan.rankExpertParams[rank] : 0;
  return {plan.rankParams[rank] - experts, experts};
}

}  // namespace strata::plan
