// The rules a layout must satisfy before it is timed; each reason names the
// values so a user sees at once what to change.
#include <algorithm>

#include "strata/plan/cost_model.h"
#include "strata/schedule/registry.h"

namespace strata::plan {
namespace {

std::string str(long long v) { return std::to_string(v); }

// The V schedules' own rules (docs/schedules.md): two stages per rank and
// no virtual stages; DualPipeV's order needs m >= 2 pp micro-batches.
std::string checkVSchedule(const Layout& l, int microBatches) {
  if (l.virtualStages != 1)
    return "schedule " + l.schedule +
           " places two stages per rank in a V and takes no virtual "
           "stages, but v is " +
           str(l.virtualStages) + " (use v1)";
  if (l.schedule == "dualpipe-v" && microBatches < 2 * l.pp)
    return "dualpipe-v needs at least 2 x pp = " + str(2 * l.pp) +
           " micro-batches per pipeline, but the batch gives " + str(microBatches) +
           " (global batch / (mb x dp)); use zb-v, a larger batch or a smaller mb or dp";
  return "";
}

std::string checkSchedule(const Layout& l, int microBatches) {
  std::vector<std::string> names = schedule::generatorNames();
  if (std::find(names.begin(), names.end(), l.schedule) == names.end()) {
    std::string known;
    for (const std::string& n : names) known += (known.empty() ? "" : ", ") + n;
    return "unknown schedule '" + l.schedule + "'; known schedules: " + known;
  }
  if (isVSchedule(l)) return checkVSchedule(l, microBatches);
  bool interleaved = l.schedule == "interleaved-1f1b";
  if (!interleaved && l.virtualStages != 1)
    return "schedule " + l.schedule + " runs one stage per rank, but v is " + str(l.virtualStages) +
           " (use interleaved-1f1b)";
  if (interleaved && l.virtualStages < 2)
    return "interleaved-1f1b needs v >= 2 model chunks per rank, got v " + str(l.virtualStages);
  if (interleaved && microBatches % l.pp != 0)
    return "interleaved-1f1b needs the micro-batch count (" + str(microBatches) +
           ") to be a multiple of pp " + str(l.pp);
  return "";
}

// The trainer's context-parallel rules (config/validate_config.cpp,
// context_parallel/): two equal chunks of every sequence per cp rank,
// sequence parallel splitting each rank's tokens again over tp, and under
// all-to-all whole heads and kv heads of each tp rank for every cp rank.
std::string checkContextParallel(const ModelDesc& m, const Layout& l) {
  if (l.cp == 1) return "";
  if (m.seqLen % (2 * l.cp) != 0)
    return "seq " + str(m.seqLen) + " is not divisible by 2 x cp " + str(l.cp) + " = " +
           str(2 * l.cp) +
           " (context parallelism gives each cp rank two equal chunks of every sequence)";
  if (l.sequenceParallel && (m.seqLen / l.cp) % l.tp != 0)
    return "seq " + str(m.seqLen) + " / cp " + str(l.cp) + " = " + str(m.seqLen / l.cp) +
           " tokens a cp rank are not divisible by tp " + str(l.tp) +
           " (sequence parallel splits each cp rank's tokens)";
  if (l.cpAlgorithm != CpAlgorithm::kAllToAll) return "";
  int heads = m.heads / l.tp, kvHeads = kvReplicated(m, l.tp) ? 1 : m.keyValueHeads() / l.tp;
  if (heads % l.cp != 0 || kvHeads % l.cp != 0)
    return "cp-a2a gives each of the cp " + str(l.cp) +
           " ranks whole heads, but each tp rank (tp " + str(l.tp) + ") has " + str(heads) +
           " query heads and " + str(kvHeads) +
           " kv heads; cp must divide both (or use the ring, cp-ring)";
  return "";
}

// The trainer's expert-parallel and MoE rules (config/validate_config.cpp,
// expert_parallel/moe_options.cpp): ep only with experts to spread, carved
// out of dp x cp and dividing the experts; each expert's SwiGLU split over
// tp; MoE layers route whole tokens, so no sequence parallel.
std::string checkExpertParallel(const ModelDesc& m, const Layout& l) {
  const MoeDesc& moe = m.moe;
  if (!moe.enabled())
    return l.ep == 1 ? ""
                     : "ep " + str(l.ep) + " spreads experts, but model " + m.name +
                           " has none (no mixture-of-experts layers)";
  if (moe.expertFfn % l.tp != 0)
    return "tp " + str(l.tp) + " does not divide expert_ffn " + str(moe.expertFfn);
  if (l.sequenceParallel)
    return "mixture-of-experts layers route whole tokens and do not take sequence parallel; "
           "drop sp (tp " +
           str(l.tp) + ")";
  if (l.replicas() % l.ep != 0)
    return "ep " + str(l.ep) + " does not divide dp " + str(l.dp) + " x cp " + str(l.cp) + " = " +
           str(l.replicas()) + " (expert parallelism is carved out of the replicas)";
  if (moe.experts % l.ep != 0)
    return "ep " + str(l.ep) + " does not divide the " + str(moe.experts) + " experts";
  return "";
}

}  // namespace

std::string checkLayout(const TrainingJob& job, const Layout& l) {
  const ModelDesc& m = job.model;
  const Cluster& c = job.cluster;
  if (l.pp < 1 || l.tp < 1 || l.dp < 1 || l.cp < 1 || l.ep < 1 || l.virtualStages < 1 ||
      l.microBatch < 1)
    return "pp, tp, dp, cp, ep, v and mb must all be at least 1 in " + toString(l);
  if (l.devices() != c.totalDevices())
    return "pp " + str(l.pp) + " x tp " + str(l.tp) + (l.cp > 1 ? " x cp " + str(l.cp) : "") +
           " x dp " + str(l.dp) + " = " + str(l.devices()) + " devices, but the cluster has " +
           str(c.nodes) + " nodes x " + str(c.devicesPerNode) + " = " + str(c.totalDevices());
  int stages = pipelineStages(l);
  // "pp 4 x v 2" or "2 x pp 4 (zb-v)": how the stages come about.
  std::string cut = isVSchedule(l) ? "2 x pp " + str(l.pp) + " (" + l.schedule + ")"
                                   : "pp " + str(l.pp) + " x v " + str(l.virtualStages);
  if (m.layers < stages)
    return str(m.layers) + " layers cannot fill " + cut + " = " + str(stages) +
           " stages of at least one layer";
  if (job.evenStages && m.layers % stages != 0)
    return str(m.layers) + " layers do not divide into " + cut + " = " + str(stages) +
           " equal stages";
  // tp dividing the heads divides the hidden size too, which they divide.
  if (m.heads % l.tp != 0 || m.ffn % l.tp != 0)
    return "tp " + str(l.tp) + " does not divide the " + str(m.heads) + " heads and ffn " +
           str(m.ffn);
  // Each kv head is split over tp ranks, or replicated on tp / kv-heads of them.
  int kvHeads = m.keyValueHeads();
  if (kvHeads % l.tp != 0 && l.tp % kvHeads != 0)
    return "tp " + str(l.tp) + " neither divides the " + str(kvHeads) +
           " kv heads nor is a multiple of them";
  if (std::string why = checkContextParallel(m, l); !why.empty()) return why;
  if (std::string why = checkExpertParallel(m, l); !why.empty()) return why;
  if (l.tp > c.devicesPerNode && !job.allowCrossNodeTp)
    return "tp " + str(l.tp) + " exceeds the " + str(c.devicesPerNode) +
           " devices of a node (tensor parallelism needs the intra-node link)";
  if (l.ppInner && l.tp > 1 && l.tpStride() * l.tp > c.devicesPerNode && !job.allowCrossNodeTp)
    return "pp-inner spreads each tp group of " + str(l.tp) +
           " over nodes (tensor parallelism needs the intra-node link)";
  if (job.globalBatch % (l.microBatch * l.dp) != 0)
    return "global batch " + str(job.globalBatch) + " is not a multiple of mb " +
           str(l.microBatch) + " x dp " + str(l.dp) + " = " + str(l.microBatch * l.dp);
  // ZeRO-3 reduce-scatters once per step after the micro-batches; ZeRO-2's
  // gradient chunks would be reduced per micro-batch.
  if (l.zeroStage == 2 && l.pp > 1)
    return "ZeRO-" + str(l.zeroStage) +
           " shards gradients, which pipeline accumulation over micro-batches keeps whole; "
           "use zero0 or zero1 with pp " +
           str(l.pp);
  return checkSchedule(l, l.microBatches(job.globalBatch));
}

}  // namespace strata::plan
