#include "strata/train/lr_schedule.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>

#include "strata/config/optimizer.h"
#include "test_util.h"

namespace strata::train {
namespace {

LrScheduleOptions options() {
  LrScheduleOptions o;
  o.peak = 1.0;
  o.floor = 0.1;
  o.warmupSteps = 10;
  o.totalSteps = 110;
  return o;
}

TEST(WarmupCosineLr, WarmsUpLinearlyThenDecaysToTheFloor) {
  WarmupCosineLr lr(options());
  EXPECT_DOUBLE_EQ(lr.at(0), 0.1);
  EXPECT_DOUBLE_EQ(lr.at(4), 0.5);
  EXPECT_DOUBLE_EQ(lr.at(9), 1.0);
  EXPECT_DOUBLE_EQ(lr.at(10), 1.0);     // cosine starts at the peak
  EXPECT_NEAR(lr.at(60), 0.55, 1e-12);  // halfway: floor + (peak - floor) / 2
  EXPECT_NEAR(lr.at(35), 0.1 + 0.9 * (1 + std::cos(M_PI / 4)) / 2, 1e-12);
  EXPECT_DOUBLE_EQ(lr.at(110), 0.1);
  EXPECT_DOUBLE_EQ(lr.at(500), 0.1);
  for (int64_t step = 10; step < 110; ++step) EXPECT_LE(lr.at(step + 1), lr.at(step));
}

TEST(WarmupCosineLr, NoWarmupStartsAtThePeak) {
  LrScheduleOptions o = options();
  o.warmupSteps = 0;
  EXPECT_DOUBLE_EQ(WarmupCosineLr(o).at(0), 1.0);
}

TEST(WarmupCosineLr, StateRestoresTheCurve) {
  WarmupCosineLr original(options());
  for (int i = 0; i < 37; ++i) original.advance();
  WarmupCosineLr resumed(options());
  resumed.restore(original.state());
  EXPECT_EQ(resumed.state().step, 37);
  EXPECT_DOUBLE_EQ(resumed.current(), original.current());
  EXPECT_DOUBLE_EQ(resumed.current(), original.at(37));
}

TEST(WarmupCosineLr, RejectsBadOptions) {
  LrScheduleOptions o = options();
  o.floor = 2.0;
  expectErrorNaming([&] { WarmupCosineLr{o}; }, {"floor 2"});
  o = options();
  o.totalSteps = 5;
  expectErrorNaming([&] { WarmupCosineLr{o}; }, {"warmup 10", "total 5"});
}

TEST(AdamW, DecaysMatricesOnlyAndTakesTheScheduledRate) {
  torch::manual_seed(0);
  torch::nn::Linear layer(4, 3);
  OptimConfig config;
  config.weightDecay = 0.5;
  auto optimizer = makeAdamW(layer->parameters(), config);
  ASSERT_EQ(optimizer->param_groups().size(), 2u);
  auto& decayed = static_cast<torch::optim::AdamWOptions&>(optimizer->param_groups()[0].options());
  auto& plain = static_cast<torch::optim::AdamWOptions&>(optimizer->param_groups()[1].options());
  EXPECT_EQ(optimizer->param_groups()[0].params()[0].dim(), 2);  // weight
  EXPECT_EQ(optimizer->param_groups()[1].params()[0].dim(), 1);  // bias
  EXPECT_DOUBLE_EQ(decayed.weight_decay(), 0.5);
  EXPECT_DOUBLE_EQ(plain.weight_decay(), 0.0);
  EXPECT_DOUBLE_EQ(std::get<1>(decayed.betas()), 0.95);

  WarmupCosineLr lr(options());
  lr.advance();
  lr.apply(*optimizer);
  EXPECT_DOUBLE_EQ(decayed.lr(), 0.2);
  EXPECT_DOUBLE_EQ(plain.lr(), 0.2);
}

}  // namespace
}  // namespace strata::train
