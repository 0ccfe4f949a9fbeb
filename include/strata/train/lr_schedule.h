// Learning rate: linear warmup, then cosine decay to a floor.
//
//   step < W:        lr = peak * (step + 1) / W
//   W <= step < T:   lr = floor + (peak - floor) * (1 + cos(pi * (step - W) / (T - W))) / 2
//   step >= T:       lr = floor
//
// with W warmup steps and T total steps; `step` counts optimizer steps from
// 0. The state is the step counter alone, so restoring it resumes the curve
// exactly. Nothing blocks; the constructor throws ConfigError naming the
// values for peak <= 0, floor outside [0, peak], W < 0 or T < W.
#pragma once

#include <cstdint>

#include "strata/checkpoint/lr_state.h"

namespace torch::optim {
class Optimizer;
}

namespace strata::train {

struct LrScheduleOptions {
  double peak = 1e-3;
  double floor = 1e-4;
  int64_t warmupSteps = 0;
  int64_t totalSteps = 1;
};

class WarmupCosineLr {
 public:
  explicit WarmupCosineLr(LrScheduleOptions options);

  double at(int64_t step) const;
  double current() const { return at(state_.step); }
  // Sets every parameter group of `optimizer` to current().
  void apply(torch::optim::Optimizer& optimizer) const;
  void advance() { ++state_.step; }

  LrState state() const { return state_; }
  void restore(LrState state) { state_ = state; }

 private:
  LrScheduleOptions options_;
  LrState state_;
};

}  // namespace strata::train
