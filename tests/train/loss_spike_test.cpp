#include "strata/train/loss_spike.h"

#include <gtest/gtest.h>

namespace strata::train {
namespace {

// A loss jumping far above 50 steps that wobble around 2.0 is a spike;
// before 50 steps, or going down, nothing is.
TEST(LossSpike, AJumpAboveTheRecentLossesIsASpike) {
  LossSpikeDetector detector(6);
  EXPECT_FALSE(detector.observe(9.0)) << "judged before a window was seen";
  for (int step = 1; step < 50; ++step) {
    EXPECT_FALSE(detector.observe(2.0 + (step % 2 ? 0.01 : -0.01)));
  }
  EXPECT_FALSE(detector.observe(1.0)) << "a falling loss is no spike";
  EXPECT_FALSE(detector.observe(2.05));
  std::optional<LossSpike> spike = detector.observe(3.0);
  ASSERT_TRUE(spike);
  EXPECT_GT(spike->zScore, 6);
  EXPECT_NEAR(spike->mean, 2.0, 0.03);
}

TEST(LossSpike, ZeroThresholdTurnsItOff) {
  LossSpikeDetector detector(0, 2);
  detector.observe(1.0);
  detector.observe(1.1);
  EXPECT_FALSE(detector.observe(100.0));
}

}  // namespace
}  // namespace strata::train
