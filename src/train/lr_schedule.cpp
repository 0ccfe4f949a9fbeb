#include "strata/train/lr_schedule.h"

#include <torch/torch.h>

#include <cmath>
#include <string>

#include "strata/error.h"

namespace strata::train {

WarmupCosineLr::WarmupCosineLr(LrScheduleOptions options) : options_(options) {
  const LrScheduleOptions& o = options_;
  if (!(o.peak > 0) || !(o.floor >= 0 && o.floor <= o.peak) || o.warmupSteps < 0 ||
      o.totalSteps < o.warmupSteps)
    throw ConfigError(
        "learning-rate schedule needs peak > 0, 0 <= floor <= peak and "
        "0 <= warmup <= total steps; got peak " +
        std::to_string(o.peak) + ", floor " + std::to_string(o.floor) + ", warmup " +
        std::to_string(o.warmupSteps) + ", total " + std::to_string(o.totalSteps));
}

double WarmupCosineLr::at(int64_t step) const {
  const LrScheduleOptions& o = options_;
  if (step < o.warmupSteps)
    return o.peak * static_cast<double>(step + 1) / static_cast<double>(o.warmupSteps);
  if (step >= o.totalSteps) return o.floor;
  double progress =
      static_cast<double>(step - o.warmupSteps) / static_cast<double>(o.totalSteps - o.warmupSteps);
  return o.floor + (o.peak - o.floor) * 0.5 * (1.0 + std::cos(M_PI * progress));
}

void WarmupCosineLr::apply(torch::optim::Optimizer& optimizer) const {
  double lr = current();
  for (torch::optim::OptimizerParamGroup& group : optimizer.param_groups())
    group.options().set_lr(lr);
}

}  // namespace strata::train
