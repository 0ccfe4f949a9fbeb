// torch::optim::AdamW whose step() updates each parameter in one pass over
// memory (adamwUpdate, adamw_update.h).
//
// Same options, parameter groups, state (AdamWParamState, keyed as LibTorch
// keys it) and checkpoints as torch::optim::AdamW, so code written for that
// class works unchanged; only the memory traffic of a step differs. Groups
// with amsgrad take LibTorch's own step.
//
// stepOnScaledGradients(s) steps as step() would after every gradient had
// been multiplied by s (gradient clipping's factor), without that pass over
// the gradients: they keep their values (with amsgrad, which takes
// LibTorch's own step, they are scaled in place first).
//
// Nothing blocks or communicates; both steps throw c10::Error for a sparse
// gradient, as LibTorch's does.
#pragma once

#include <torch/optim/adamw.h>

namespace strata::optim {

class FusedAdamW : public torch::optim::AdamW {
 public:
  using torch::optim::AdamW::AdamW;
  at::Tensor step(LossClosure closure = nullptr) override;
  void stepOnScaledGradients(double scale);

 private:
  void update(double gradScale);
};

}  // namespace strata::optim
