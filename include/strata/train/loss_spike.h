// Loss spikes: a step's loss far above the recent ones, as diverging runs
// show before they blow up.
//
// observe() compares each loss with the mean and standard deviation of the
// `window` losses before it: a loss more than `threshold` standard
// deviations above the mean is a spike (only upward: a falling loss is
// training working). Nothing is judged until `window` losses have been seen.
// Nothing here blocks or throws.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>

namespace strata::train {

struct LossSpike {
  double zScore = 0;
  double mean = 0;  // of the window before the spike
};

class LossSpikeDetector {
 public:
  static constexpr int64_t kDefaultWindow = 50;

  // threshold <= 0 turns detection off.
  explicit LossSpikeDetector(double threshold, int64_t window = kDefaultWindow);

  // The spike this loss is, if it is one; the loss then joins the window.
  std::optional<LossSpike> observe(double loss);

 private:
  double threshold_;
  int64_t window_;
  std::deque<double> recent_;
};

}  // namespace strata::train
