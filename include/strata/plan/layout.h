// One way to run a model on a cluster: the parallel degrees and the knobs that
// change time and memory but not the maths.
//
// Ranks are placed tp fastest-varying, then dp, then pp:
//   rank = t + tp * (d + dp * p)
// so a tensor-parallel group is `tp` consecutive devices (inside one node when
// tp divides the devices per node), data-parallel peers are `tp` apart and
// pipeline neighbours `tp * dp` apart. The other placement the planner knows,
// `pp-inner`, turns the order around (pp fastest, then dp, then tp):
//   rank = p + pp * (d + dp * t)
// so pipeline neighbours share a node and tensor-parallel groups spread over
// nodes; it exists to be compared (bench_placement) and is only searched with
// allowCrossNodeTp. parseLayout() reads the text form
// `pp8,tp8,dp24,mb1,v1,1f1b,zero3,recompute,sp,pp-inner,no-reshard` (any order, omitted
// items take the defaults below) and throws PlanError naming the bad item.
#pragma once

#include <string>

namespace strata::plan {

struct Layout {
  int pp = 1;
  int tp = 1;
  int dp = 1;
  int virtualStages = 1;  // model chunks per pipeline rank (interleaved schedules)
  int microBatch = 1;     // sequences per micro-batch
  std::string schedule = "1f1b";
  int zeroStage = 0;  // 0: replicated; 1: optimizer; 2: + gradients; 3: + parameters
  bool recompute = false;
  bool sequenceParallel = false;
  bool ppInner = false;  // the pp-inner placement above
  // ZeRO-3 releases each layer after its forward and gathers it again for
  // backward; off (`no-reshard`), a rank's layers stay gathered for the step.
  bool reshardAfterForward = true;

  int devices() const { return pp * tp * dp; }
  // Distance in ranks between neighbours of a group, by placement.
  int tpStride() const { return ppInner ? pp * dp : 1; }
  int dpStride() const { return ppInner ? pp : tp; }
  int ppStride() const { return ppInner ? 1 : tp * dp; }
  // Micro-batches per pipeline per iteration: B / (mb * dp). The caller checks
  // divisibility (see checkLayout in search.h).
  int microBatches(int globalBatch) const { return globalBatch / (microBatch * dp); }
};

Layout parseLayout(const std::string& text);
std::string toString(const Layout& layout);

}  // namespace strata::plan
