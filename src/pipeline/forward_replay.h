// Replaying a checkpointed stage's forward exactly.
//
// Activation checkpointing runs a stage's forward twice: once under no-grad,
// and again with grad just before its backward. Between the two, the stage's
// other forwards have moved on whatever state a forward reads besides its
// input and weights: the device's default random generator (the masks of
// torch::nn::Dropout), and module buffers (the call counters of the seeded
// tensor-parallel dropout, batch-norm statistics). Replayed as they are then,
// the recompute would draw other masks, and its gradients would not be those
// of the forward that produced the loss.
//
// So the first forward captures that state, and the recompute runs with it
// put back, after which the state as it was before the recompute returns: the
// recompute computes what the first forward did and leaves no trace.
#pragma once

#include <ATen/core/Tensor.h>

#include <functional>
#include <vector>

#include "strata/pipeline/stage.h"

namespace strata::pipeline {

class ForwardReplay {
 public:
  // Captures `stage`'s buffers and its device's default generator, just
  // before the stage's first forward.
  explicit ForwardReplay(const Stage& stage);

  // Runs `recompute` with the captured state in place, then restores the
  // state as it was before this call.
  at::Tensor replay(const std::function<at::Tensor()>& recompute) const;

 private:
  const Stage* stage_;
  std::vector<at::Tensor> buffers_;  // copies, in Stage::buffers() order
  at::Tensor generatorState_;
};

}  // namespace strata::pipeline
