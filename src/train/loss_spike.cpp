#include "strata/train/loss_spike.h"

#include <cmath>

namespace strata::train {

LossSpikeDetector::LossSpikeDetector(double threshold, int64_t window)
    : threshold_(threshold), window_(window) {}

std::optional<LossSpike> LossSpikeDetector::observe(double loss) {
  if (threshold_ <= 0 || !std::isfinite(loss)) return std::nullopt;
  std::optional<LossSpike> spike;
  if (static_cast<int64_t>(recent_.size()) == window_) {
    double sum = 0, squares = 0;
    for (double x : recent_) sum += x;
    double mean = sum / static_cast<double>(window_);
    for (double x : recent_) squares += (x - mean) * (x - mean);
    double deviation = std::sqrt(squares / static_cast<double>(window_));
    double z = deviation > 0 ? (loss - mean) / deviation : 0;
    if (z > threshold_) spike = LossSpike{z, mean};
    recent_.pop_front();
  }
  recent_.push_back(loss);
  return spike;
}

}  // namespace strata::train
