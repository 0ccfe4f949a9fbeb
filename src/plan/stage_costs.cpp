#include "stage_costs.h"

#include <algorithm>

#include "strata/plan/comm.h"
#include "strata/plan/partition.h"

namespace strata::plan {
namespace {

// Seconds of one forward of one transformer layer on one micro-batch, split
// into compute and its two tensor-parallel all-reduces of b*s*h 16-bit values
// (with sequence parallel: a reduce-scatter and an all-gather each, the same
// volume and so the same alpha-beta cost).
struct LayerTime {
  double compute = 0;
  double tpComm = 0;
};

LayerTime layerForward(const TrainingJob& job, const Layout& l) {
  const ModelDesc& m = job.model;
  const DeviceSpec& device = job.cluster.device;
  double flops = layerForwardFlops(m, l.microBatch) / l.tp;
  double matmul = flops / job.cluster.achievedFlops(job.dtype);
  // The element-wise work between the matmuls (layer norms, softmax, GeLU,
  // dropout, residual adds) is bound by memory bandwidth: it writes, and the
  // next op reads, each activation the layer keeps for its backward once.
  double traffic = 2 * workingActivationBytes(m, l.microBatch, l.tp, l.sequenceParallel);
  double elementwise = traffic / device.memoryBandwidth;
  double activationBytes = 2.0 * l.microBatch * m.seqLen * m.hidden;
  const Link& link = groupLink(job.cluster, 1, l.tp);
  return {matmul + elementwise, 2 * allReduceSeconds(activationBytes, l.tp, link)};
}

// Forward F; backward 2F of compute split evenly into input (I) and weight (W)
// gradients; the backward's all-reduces and any recompute belong to I, on the
// critical path.
StageTime stageTime(double layers, const LayerTime& layer, double logits, bool recompute) {
  StageTime t;
  double forward = layers * layer.compute + logits;
  double comm = layers * layer.tpComm;
  double redo = recompute ? layers * layer.compute : 0;
  double redoComm = recompute ? comm : 0;
  t.compute = 3 * forward;
  t.recompute = redo;
  t.tpComm = 2 * comm + redoComm;
  t.costs.forward = forward + comm;
  t.costs.backwardWeight = forward;
  t.costs.backwardInput = forward + comm + redo + redoComm;
  t.costs.backward = t.costs.backwardInput + t.costs.backwardWeight;
  return t;
}

// Layers per stage: equal when they divide, otherwise the balanced
// partitioner's contiguous cut over per-layer time (forward + backward), the
// logits counted with the last layer so the last stage gets fewer layers.
std::vector<int> stageLayerCounts(const ModelDesc& m, int stages, const StageTime& layer,
                                  const StageTime& logits) {
  if (m.layers % stages == 0) return std::vector<int>(stages, m.layers / stages);
  auto seconds = [](const StageTime& t) { return t.costs.forward + t.costs.backward; };
  std::vector<LayerCost> layers(m.layers, {seconds(layer), 0});
  layers.back().seconds += seconds(logits);
  return partitionBalanced(layers, stages).counts();
}

}  // namespace

StagePlan planStages(const TrainingJob& job, const Layout& l) {
  const ModelDesc& m = job.model;
  int stages = l.pp * l.virtualStages;
  StagePlan plan;
  plan.rankParams.assign(l.pp, 0.0);
  plan.rankMaxLayers.assign(l.pp, 0);
  LayerTime layer = layerForward(job, l);
  double logits = logitsForwardFlops(m, l.microBatch) / l.tp / job.cluster.achievedFlops(job.dtype);
  std::vector<int> counts = stageLayerCounts(m, stages, stageTime(1, layer, 0, l.recompute),
                                             stageTime(0, layer, logits, false));
  double tiedEmbedding = double(m.vocab) * m.hidden;
  for (int s = 0; s < stages; ++s) {
    bool last = s == stages - 1;
    plan.stages.push_back(stageTime(counts[s], layer, last ? logits : 0, l.recompute));
    // The first stage owns the embeddings; the last a copy of the word
    // embedding for the tied logits (kept in sync by a small all-reduce).
    double params = counts[s] * layerParameters(m);
    if (s == 0) params += embeddingParameters(m);
    if (last && stages > 1) params += tiedEmbedding;
    plan.rankParams[s % l.pp] += params / l.tp;
    plan.rankMaxLayers[s % l.pp] = std::max(plan.rankMaxLayers[s % l.pp], counts[s]);
  }
  double handOffBytes = 2.0 * l.microBatch * m.seqLen * m.hidden / l.tp;
  plan.p2pSeconds =
      l.pp > 1 ? pointToPointSeconds(handOffBytes, groupLink(job.cluster, l.tp * l.dp, l.pp)) : 0;
  return plan;
}

}  // namespace strata::plan
