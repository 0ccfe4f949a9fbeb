// One way to run a model on a cluster: the parallel degrees and the knobs that
// change time and memory but not the maths.
//
// Ranks are placed as the trainer places them (strata/runtime/layout.h): tp
// fastest-varying, then cp, then dp, then pp:
//   rank = t + tp * (c + cp * (d + dp * p))
// so a tensor-parallel group is `tp` consecutive devices (inside one node when
// tp divides the devices per node), context-parallel peers are `tp` apart
// (inside a node while tp * cp fits one), data-parallel peers `tp * cp` apart
// and pipeline neighbours `tp * cp * dp` apart. The other placement the
// planner knows, `pp-inner`, turns the order around (pp fastest, then dp,
// then cp, then tp):
//   rank = p + pp * (d + dp * (c + cp * t))
// so pipeline neighbours share a node and tensor-parallel groups spread over
// nodes; it exists to be compared (bench_placement) and is only searched with
// allowCrossNodeTp. Either way the dp x cp ranks that hold the same
// parameters (replicas()) are adjacent in the order, one group of dp * cp
// ranks replicaStride() apart.
//
// Context parallelism (cp) splits every sequence over cp ranks
// (strata/context_parallel/context_parallel.h); its attention runs as a ring
// (keys and values travel around the group) or all-to-all (Ulysses: heads
// traded for tokens and back).
//
// Expert parallelism (ep) spreads the experts of every MoE layer over ep
// ranks carved out of the dp x cp replicas, as the trainer does
// (train/moe_training.cpp): it adds no devices. The replicas' run is cut
// into groups of ep consecutive members (an ep group, replicaStride() apart,
// which trades tokens by all-to-all); the members at the same place of every
// group hold the same experts (expertReplicas() of them, ep x replicaStride()
// apart) and average those experts' gradients.
//
// parseLayout() reads the text form
// `pp8,tp8,dp24,cp2,cp-a2a,ep4,mb1,v1,1f1b,zero3,recompute,sp,pp-inner,no-reshard`
// (any order, omitted items take the defaults below; `cp-ring` names the
// default algorithm) and throws PlanError naming the bad item. toString()
// writes every degree but cp and ep, which it writes only above 1, and the
// algorithm only when it is all-to-all, so a cp = 1, ep = 1 layout reads as
// it did before context and expert parallelism.
#pragma once

#include <string>
#include <vector>

namespace strata::plan {

// How attention sees the whole sequence under cp > 1, as the trainer's
// parallel.cp_algorithm ("ring", "all-to-all") names it.
enum class CpAlgorithm { kRing, kAllToAll };

struct Layout {
  int pp = 1;
  int tp = 1;
  int dp = 1;
  int cp = 1;  // context parallel: ranks each sequence is split over
  CpAlgorithm cpAlgorithm = CpAlgorithm::kRing;
  int ep = 1;  // expert parallel: ranks of dp x cp each MoE layer's experts are spread over
  int virtualStages = 1;  // model chunks per pipeline rank (interleaved schedules)
  // Any generator of strata/schedule/registry.h; zb-v and dualpipe-v run
  // two stages per rank, in a V (pipelineStages, stageRanks).
  int microBatch = 1;  // sequences per micro-batch
  std::string schedule = "1f1b";
  int zeroStage = 0;  // 0: replicated; 1: optimizer; 2: + gradients; 3: + parameters
  bool recompute = false;
  bool sequenceParallel = false;
  bool ppInner = false;  // the pp-inner placement above
  // ZeRO-3 releases each layer after its forward and gathers it again for
  // backward; off (`no-reshard`), a rank's layers stay gathered for the step.
  bool reshardAfterForward = true;

  int devices() const { return pp * tp * cp * dp; }
  // Distance in ranks between neighbours of a group, by placement.
  int tpStride() const { return ppInner ? pp * dp * cp : 1; }
  int cpStride() const { return ppInner ? pp * dp : tp; }
  int dpStride() const { return ppInner ? pp : tp * cp; }
  int ppStride() const { return ppInner ? 1 : tp * cp * dp; }
  // The ranks that hold the same parameters: dp replicas of cp ranks each,
  // which average their gradients (and shard ZeRO's state) together.
  int replicas() const { return dp * cp; }
  // Their neighbours' distance: cp runs inside dp by default, dp inside cp
  // under pp-inner, so the dp x cp group is one run of ranks either way.
  int replicaStride() const { return ppInner ? dpStride() : cpStride(); }
  // An ep group: ep consecutive replicas.
  int epStride() const { return replicaStride(); }
  // The replicas that hold the same experts, one of each ep group, and
  // their distance.
  int expertReplicas() const { return replicas() / ep; }
  int expertReplicaStride() const { return replicaStride() * ep; }
  // Micro-batches per pipeline per iteration: B / (mb * dp); cp ranks share
  // their sequences instead of taking more. The caller checks divisibility
  // (see checkLayout in cost_model.h).
  int microBatches(int globalBatch) const { return globalBatch / (microBatch * dp); }
};

// "ring" or "all-to-all", as the trainer's parallel.cp_algorithm.
const char* cpAlgorithmName(CpAlgorithm algorithm);

// The V schedules (zb-v, dualpipe-v): 2 pp stages, rank r running stage r
// on the way down and stage 2 pp - 1 - r on the way back up, so rank 0
// holds both the embedding's stage and the head's, and the hand-off
// between the arms stays on rank pp - 1 (schedule::vPlacement).
bool isVSchedule(const Layout& layout);
// Stages of the pipeline: pp x v, or 2 pp for a V schedule.
int pipelineStages(const Layout& layout);
// The rank of every stage: round-robin (stage % pp), or the V's.
std::vector<int> stageRanks(const Layout& layout);

Layout parseLayout(const std::string& text);
std::string toString(const Layout& layout);

}  // namespace strata::plan
