#include "rank_memory.h"

#include <algorithm>

#include "held_sends.h"
#include "layer_tensors.h"
#include "stage_memory.h"

namespace strata::plan {
namespace {

using schedule::Action;
using schedule::ActionKind;

// ZeRO-3 units gathered at once: the one computing and one prefetched (the
// trainer's default prefetch, fully_sharded.h).
constexpr double kGatheredUnits = 2;

// ZeRO-3's largest unit, a layer's or the word embedding's (the trainer
// gathers one unit a layer, fully_sharded.h), with this ep rank's experts.
double largestUnit(const ModelDesc& m, const Layout& l) {
  double layer = tpRankLayerParameters(m, LayerKind::kDense, l.tp, l.ep);
  if (m.moe.enabled())
    layer = std::max(layer, tpRankLayerParameters(m, LayerKind::kMoe, l.tp, l.ep));
  return std::max(layer, embeddingParameters(m) / l.tp);
}

// ZeRO-3's largest unit of adapters under LoRA: a dense layer's or an MoE
// layer's, whose experts' adapters are a unit of their own.
double largestAdapterUnit(const ModelDesc& m, const Layout& l) {
  double dense = loraLayerParameters(m, l.tp);
  if (!m.moe.enabled()) return dense;
  return std::max(dense, loraLayerParameters(m, l.tp, LayerKind::kMoe, l.ep));
}

// The projection weights of a rank's layers: all of each layer's but its
// norms and router (what finetune.base_dtype = "bf16" keeps in bf16).
double frozenProjectionParams(const ModelDesc& m, const Layout& l, const StagePlan& plan,
                              int rank) {
  double norms = 2.0 * m.hidden, params = 0;
  for (int s : stagesOn(plan, rank)) {
    const StageLayers& layers = plan.stageLayers[s];
    params += layers.dense * (tpRankLayerParameters(m, LayerKind::kDense, l.tp, l.ep) - norms);
    params += layers.moe *
              (tpRankLayerParameters(m, LayerKind::kMoe, l.tp, l.ep) - norms - routerParameters(m));
  }
  return params;
}

// The largest parameter tensor on a tp rank, a layer's matrix or an
// embedding's (layer_tensors.h): what a framework that gathers every tensor
// by itself holds of one.
double largestTensor(const ModelDesc& m, const Layout& l) {
  double largest = 0;
  for (const WeightTensor& t : embeddingTensors(m, l.tp)) largest = std::max(largest, t.elements);
  std::vector<LayerKind> kinds{LayerKind::kDense};
  if (m.moe.enabled()) kinds.push_back(LayerKind::kMoe);
  for (LayerKind kind : kinds)
    for (const WeightTensor& t : layerWeightTensors(m, kind, l.tp, l.ep))
      largest = std::max(largest, t.elements);
  return largest;
}

// What ZeRO-3 gathers at a time, the running unit or the prefetched one:
// the trainer's layer, or another framework's tensor (cost_model.h's
// Framework::zero3Gathering).
double gatheredUnit(const TrainingJob& job, const Layout& l) {
  if (job.framework.zero3Gathering == Framework::Zero3Gathering::kByTensor)
    return largestTensor(job.model, l);
  return largestUnit(job.model, l);
}

// What ZeRO-3 holds whole on top of the shards while the pipeline runs
// (see cost_model.h). A frozen base is gathered with its adapters, which
// alone have gradients.
MemoryBreakdown fullyShardedExtras(const TrainingJob& job, const Layout& l, const StagePlan& plan,
                                   int rank) {
  double rankParams = plan.rankParams[rank];
  double largest = gatheredUnit(job, l);
  MemoryBreakdown extras;
  // Resharding: the running unit and the one prefetched. Kept gathered:
  // every layer of the rank, from its first forward to the step's
  // reduce-scatter.
  double gathered = l.reshardAfterForward ? kGatheredUnits * largest : rankParams;
  extras.parameters = gathered * job.precision.weightBytes;
  // Full gradients: with one micro-batch a step, the running layer's
  // before its reduce-scatter makes its shard; with more, every layer's,
  // accumulated until the last backward's reduce-scatters (FSDP's no_sync),
  // which make the shards as they drop them: the rank then holds its full
  // gradients in place of its shards.
  double trained = plan.frozenBase ? plan.rankAdapterParams[rank] : rankParams;
  double largestTrained = plan.frozenBase ? largestAdapterUnit(job.model, l) : largest;
  double shards = trained / l.replicas();
  extras.gradients = l.microBatches(job.globalBatch) > 1 ? (trained - shards) : largestTrained;
  extras.gradients *= job.precision.gradBytes;
  return extras;
}

// The moment a rank holds the most: its stashes and the buffers beside them.
struct Moment {
  double stash = 0;
  double buffers = 0;
  double gradients = 0;  // released ones made again by then (pipelinePeak)
  double total() const { return stash + buffers + gradients; }
};

void keepLarger(Moment& peak, const Moment& now) {
  if (now.total() > peak.total()) peak = now;
}

// Walks the rank's actions in order, as the executor runs them
// (pipeline/executor.cpp): a forward stashes its stage's `kept` (its input
// is the previous stage's output when that stage runs here too), its end
// holds the head's working tensors. A backward (B, or a split one's I)
// first rebuilds a recomputed stage, whose forward's end holds the head's
// working tensors again, then holds its own working tensors at its start,
// and its layers' (ring attention's) once the head's are gone; I keeps the
// gradients W needs as it goes, which W turns into the weights' gradients
// before B or W frees the stash. The first stage's I does nothing but keep
// its output gradient: its W runs the whole backward. A hand-off sent to
// another rank stays with its send until delivered and let go of
// (held_sends.h); an output a stash holds costs its send nothing until the
// stash goes. One handed to a stage of the same rank waits in its mailbox
// until that stage's backward takes it. The replica's batch (int64 ids and
// targets) lives through the pipeline. Gradients the trainer releases
// before each step (`releasedGradients` bytes, without replicas) are held
// again from the end of the rank's first pass that makes weight gradients
// (B, or W of a split backward).
Moment pipelinePeak(const TrainingJob& job, const Layout& l, const StagePlan& plan,
                    const schedule::Schedule& pipeline, int rank, double releasedGradients) {
  std::vector<StageMemory> stages = stageMemory(job, l, plan);
  double handOff = handOffBytes(job, l);
  // Another framework's sends free their buffers as they are delivered.
  double sentHandOff = job.framework.holdsSendsUntilTaken ? handOff : 0;
  int last = pipeline.stages() - 1;
  auto remote = [&](int stage) { return pipeline.rankOf(stage) != rank; };
  auto keptBy = [&](int s) {
    bool localInput = s > 0 && !remote(s - 1);
    return stages[s].kept - (localInput ? stages[s].input : 0);
  };
  double batch = 16.0 * job.globalBatch / l.dp * job.model.seqLen;
  double stash = 0, mailbox = 0;
  HeldSends sends(pipeline, rank);
  Moment peak{0, batch};
  double gradients = 0;
  auto others = [&] { return batch + sends.held() * sentHandOff + mailbox; };
  auto hold = [&](double stashed, double buffers) {
    keepLarger(peak, {stashed, buffers, gradients});
  };
  // Where the backward of stage s takes its output's gradient from, and
  // leaves its input's.
  auto takeGradient = [&](int s) {
    if (s < last && !remote(s + 1)) mailbox -= handOff;
  };
  auto passGradient = [&](const Action& action) {
    int s = action.stage;
    if (s == 0) return;
    if (remote(s - 1)) {
      sends.afterAction(action, false);
    } else {
      mailbox += handOff;
    }
  };
  // The moments of a backward that `keeps` more as it goes (I's gradients).
  auto backward = [&](const StageMemory& stage, double keeps) {
    double rebuilt = stash + stage.rebuilt;
    if (stage.checkpointed) hold(rebuilt, others() + stage.forwardWork);
    hold(rebuilt + keeps, others() + stage.backwardWork);
    hold(rebuilt - stage.headKept, others() + stage.layerWork);
  };
  for (const Action& action : pipeline.actions(rank)) {
    int s = action.stage;
    const StageMemory& stage = stages[s];
    switch (action.kind) {
      case ActionKind::kForward:
        stash += keptBy(s);
        hold(stash, others() + stage.forwardWork);
        sends.afterAction(action, !stage.checkpointed);
        break;
      case ActionKind::kBackwardInput:
        takeGradient(s);
        if (s > 0) backward(stage, stage.weightPassKept);
        passGradient(action);
        stash += stage.weightPassKept + (s > 0 ? stage.rebuilt : 0);
        break;
      case ActionKind::kBackward:
        takeGradient(s);
        backward(stage, 0);
        passGradient(action);
        stash -= keptBy(s);
        sends.stashGone(s, action.microbatch);
        gradients = releasedGradients;
        break;
      case ActionKind::kBackwardWeight:
        if (s > 0) hold(stash, others() + stage.weightPassWork);
        stash -= stage.weightPassKept;
        if (s == 0) backward(stage, 0);
        stash -= keptBy(s) + (s > 0 ? stage.rebuilt : 0);
        sends.stashGone(s, action.microbatch);
        gradients = releasedGradients;
        break;
    }
  }
  return peak;
}

// After the pipeline, the global norm and the optimizer step take each
// gradient (or ZeRO chunk) in turn. On a CPU worker, whose parameters and
// gradients are float32 (autocast keeps them so), both run in one pass over
// memory (strata/optim/) and copy nothing. Elsewhere they run as tensor operations: the norm
// squares a float64 copy of each gradient (16 bytes an element,
// grad_norm.cpp) and AdamW divides the square root of its variance (8 bytes
// an element). ZeRO-1 and 2 also copy every updated chunk for the
// all-gathers.
double stepWork(const TrainingJob& job, const Layout& l, const StagePlan& plan, int rank) {
  const Precision& p = job.precision;
  bool singlePass = job.cluster.device.hostMemory;
  double squared = singlePass ? 0 : 16;  // a norm's copy, bytes an element
  double divided = singlePass ? 0 : 8;   // AdamW's temporaries, bytes an element
  double largest = largestTensorElements(job, l, plan, rank);
  int replicas = l.replicas();
  if (l.zeroStage == 0) return squared * largest;
  // ZeRO-3's chunks are its units' shards (a LoRA unit's, its adapters').
  if (l.zeroStage == 3) {
    double unit = plan.frozenBase ? largestAdapterUnit(job.model, l) : largestUnit(job.model, l);
    return squared * unit / replicas;
  }
  // ZeRO-1 and 2's are their gradient buckets' shares.
  auto [common, experts] = replicatedParams(l, plan, rank);
  double chunk = std::min(common, job.buckets.bytes / p.gradBytes) / replicas;
  double norm = l.zeroStage == 2 ? squared * chunk : squared * largest;
  double owned = common / replicas + experts / l.expertReplicas();
  return std::max(norm, divided * chunk + owned * p.weightBytes);
}

}  // namespace

MemoryBreakdown rankModelState(const TrainingJob& job, const Layout& l, const StagePlan& plan,
                               int rank) {
  // ZeRO shards the experts under ep > 1 over their own replicas
  // (replicatedParams), the rest over dp x cp.
  auto [common, experts] = replicatedParams(l, plan, rank);
  MemoryBreakdown mem = modelStateBytes(common, l.replicas(), l.zeroStage, job.precision);
  if (experts > 0) {
    MemoryBreakdown own = modelStateBytes(experts, l.expertReplicas(), l.zeroStage, job.precision);
    mem.parameters += own.parameters;
    mem.gradients += own.gradients;
    mem.optimizer += own.optimizer;
  }
  // LoRA's frozen base: its weights alone, whole on the rank, or under
  // ZeRO-3 sharded as the trained parameters are; its projections in 2
  // bytes when kept in bf16.
  if (plan.frozenBase) {
    auto [held, heldExperts] = shardedParams(l, plan, rank);
    double base = held - plan.rankAdapterParams[rank];
    double projections =
        job.model.lora.bf16Base ? frozenProjectionParams(job.model, l, plan, rank) : 0;
    if (l.zeroStage == 3) {
      // The experts' weights, all projections, go over the experts' own
      // replicas; the rest over dp x cp.
      double expertProjections = std::min(heldExperts, projections);
      projections =
          (projections - expertProjections) / l.replicas() + expertProjections / l.expertReplicas();
      base /= l.replicas();
      heldExperts /= l.expertReplicas();
    }
    mem.parameters += (base + heldExperts) * job.precision.weightBytes;
    mem.parameters -= projections * (job.precision.weightBytes - 2);
  }
  return mem;
}

MemoryBreakdown rankMemory(const TrainingJob& job, const Layout& l, const StagePlan& plan,
                           const schedule::Schedule& pipeline, int rank) {
  MemoryBreakdown state = rankModelState(job, l, plan, rank);
  MemoryBreakdown during = state;
  if (l.zeroStage >= 3) {
    MemoryBreakdown extras = fullyShardedExtras(job, l, plan, rank);
    during.parameters += extras.parameters;
    during.gradients += extras.gradients;
  }
  // Without replicas the trainer releases the gradients before each step
  // (trainer_optimizer.cpp): the pipeline's moments count them from the
  // backward that makes them.
  double released = l.replicas() == 1 && l.zeroStage == 0 ? state.gradients : 0;
  Moment peak = pipelinePeak(job, l, plan, pipeline, rank, released);
  during.activations = peak.stash;
  during.buffers = peak.buffers;
  during.gradients += peak.gradients - released;
  MemoryBreakdown after = state;
  after.buffers = stepWork(job, l, plan, rank);
  return after.total() > during.total() ? after : during;
}

}  // namespace strata::plan
