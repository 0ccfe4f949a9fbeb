// Internal: what one pipeline stage holds a micro-batch, from the trainer's
// tensors (memory.h), for rank_memory.cpp's walk over a schedule.
#pragma once

#include <vector>

#include "stage_costs.h"

namespace strata::plan {

struct StageMemory {
  // Kept from the stage's forward until its backward (under the trainer's
  // recompute only the stage's input).
  double kept = 0;
  // What the backward's recompute builds again on top of `kept`.
  double rebuilt = 0;
  // The stage's input as it arrives, a part of `kept` (0 on the first).
  double input = 0;
  // Working tensors beside the stash at the end of the forward (the head's
  // chunk of logits and its gradients) and at the start of the backward
  // (the incoming gradient, the first products' gradients).
  double forwardWork = 0;
  double backwardWork = 0;
  // What a layer's backward holds at its peak mid-stage (ring attention's
  // block scores and working tensors, with the gradient it passes on), once
  // the head's part of `kept` is gone (`headKept`).
  double layerWork = 0;
  double headKept = 0;
  // The gradients a split backward's I keeps for its W (split_backward.h),
  // and what W holds while it makes the weights' gradients from them.
  double weightPassKept = 0;
  double weightPassWork = 0;
  // The trainer's recompute: the stash holds the input only, so the output
  // lives on in its send alone.
  bool checkpointed = false;
};

// Every stage's, in stage order.
std::vector<StageMemory> stageMemory(const TrainingJob& job, const Layout& layout,
                                     const StagePlan& plan);

// The bytes of one hand-off between stages: b*(S/cp)*h activation values,
// 1/t of them under sequence parallel.
double handOffBytes(const TrainingJob& job, const Layout& layout);

// The most elements one parameter tensor of `rank` has (the word
// embedding's or head's rows, else a layer's largest matrix): what the
// global norm and the optimizer take one at a time.
double largestTensorElements(const TrainingJob& job, const Layout& layout, const StagePlan& plan,
                             int rank);

}  // namespace strata::plan
