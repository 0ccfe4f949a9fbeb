#include "layer_time.h"

#include <algorithm>
#include <tuple>

#include "layer_traffic.h"
#include "strata/plan/comm.h"

namespace strata::plan {
namespace {

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
// is given no wait of its own. A frozen base's (LoRA's) take no gradient;
// the adapters' sums over tp, r columns a matrix, are not counted.
double kvGradientAllReduce(const TrainingJob& job, const Layout& l) {
  if (!kvReplicated(job.model, l.tp) || job.model.lora.enabled) return 0;
  double bytes = kvProjectionParameters(job.model) * job.precision.gradBytes;
  return allReduceSeconds(bytes, l.tp, groupLink(job.cluster, l.tpStride(), l.tp));
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

// The element-wise bytes of ring attention's block scores, which it computes
// but does not keep: the rank's 1/cp share of the layer's score matrices,
// priced per entry as the whole-sequence path's kept ones are
// (scoreTrafficBytes), so that the ring's softmax costs what cp = 1's does.
double ringScoreBytes(const ModelDesc& m, const Layout& l) {
  if (l.cp == 1 || l.cpAlgorithm != CpAlgorithm::kRing) return 0;
  return scoreTrafficBytes(m, l.microBatch, l.tp) / l.cp;
}

}  // namespace

// The tokens of each sequence a rank holds: S / cp (checkLayout makes it whole).
double rankTokens(const ModelDesc& m, const Layout& l) { return double(m.seqLen / l.cp); }

// A layer of `forward` and `backward` compute seconds with its tensor-parallel
// collectives, activations of `valueBytes` a value. Each direction's
// collectives gather at two points (attention's, the MLP's), after about half
// its compute each.
LayerTime withTpCollectives(double forward, double backward, double valueBytes,
                            const TrainingJob& job, const Layout& l, LayerKind kind) {
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

// The share of a layer's forward FLOPs in its attention products, 4*b*S^2*h
// of layerForwardFlops (model_desc.h): what a measured block spends there.
double attentionShare(const ModelDesc& m) {
  double s = m.seqLen;
  return 4 * s * s * m.hidden / layerForwardFlops(m, 1);
}

// From FLOPs: the matmuls at peak x efficiency, a backward of twice the
// forward's FLOPs. Under cp a rank computes 1/cp of everything: its S/cp
// tokens' projections and MLP, and a 1/cp share of the attention products
// (counted, as at cp = 1, over the whole square of scores). An MoE layer
// runs its active FLOPs: its tokens' top_k experts, the shared ones and the
// router. Under LoRA the adapters' FLOPs join the forward, and the frozen
// base's backward makes its inputs' gradients only: its weight matmuls run
// once more rather than twice (the attention products, which have no
// weights, still twice; the adapters twice).
LayerTime layerFromFlops(const TrainingJob& job, const Layout& l, LayerKind kind) {
  const ModelDesc& m = job.model;
  const DeviceSpec& device = job.cluster.device;
  double flops = (tpRankLayerForwardFlops(m, l.microBatch, l.tp, kind) +
                  loraLayerForwardFlops(m, l.microBatch, l.tp, kind)) /
                 l.cp;
  double achieved = job.cluster.achievedFlops(job.dtype);
  double matmul = flops / achieved;
  double frozen =
      m.lora.enabled ? tpRankWeightMatmulFlops(m, l.microBatch, l.tp, kind) / l.cp / achieved : 0;
  // The element-wise work between the matmuls (norms, softmax, GeLU or SiLU,
  // dropout, residual adds) is bound by memory bandwidth (layer_traffic.h).
  double kept =
      layerTrafficBytes(m, l.microBatch, l.tp, l.sequenceParallel, l.cp, l.cpAlgorithm, kind);
  double traffic = 2 * (kept + ringScoreBytes(m, l));
  double forward = matmul + traffic / device.memoryBandwidth;
  double s = m.seqLen;
  double attention = 4 * l.microBatch * s * s * m.hidden / l.tp / l.cp / achieved;
  LayerTime layer = withTpCollectives(forward, 2 * forward - frozen, 2, job, l, kind);
  layer = withContextParallel(layer, attention, 2, job, l);
  return kind == LayerKind::kMoe ? withExpertParallel(layer, 2, job, l) : layer;
}

}  // namespace strata::plan
