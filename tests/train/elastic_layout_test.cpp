// The elastic policy's fit of a layout to the world a restart found: pp, cp
// and tp kept, dp resized, the global batch kept; a world it cannot fit is
// refused naming every factor.
#include "strata/config/elastic_layout.h"

#include <gtest/gtest.h>

#include "test_util.h"

namespace strata::train {
namespace {

TrainConfig elastic(int64_t pp, int64_t dp, int64_t cp, int64_t tp) {
  TrainConfig c;
  c.parallel.pp = pp;
  c.parallel.dp = dp;
  c.parallel.cp = cp;
  c.parallel.tp = tp;
  c.parallel.elastic = "dp";
  c.train.globalBatch = 12;
  c.train.microBatch = 2;
  return c;
}

TEST(ElasticLayout, DpAbsorbsTheWorldKeepingPpCpAndTp) {
  FittedLayout fitted = fitLayoutToWorld(elastic(1, 3, 2, 2), 8);
  EXPECT_EQ(fitted.config.parallel.dp, 2);
  EXPECT_EQ(fitted.config.parallel.cp, 2);
  EXPECT_EQ(fitted.config.parallel.tp, 2);
  EXPECT_NE(fitted.note.find("the configuration pp 1 x dp 3 x cp 2 x tp 2 needs 12; running pp 1 x "
                             "dp 2 x cp 2 x tp 2 (policy dp), the global batch of 12 kept as 3 "
                             "micro-batches of 2 per replica"),
            std::string::npos)
      << fitted.note;
}

TEST(ElasticLayout, TheSameWorldOrPolicyOffChangesNothing) {
  EXPECT_TRUE(fitLayoutToWorld(elastic(1, 3, 2, 2), 12).note.empty());
  TrainConfig off = elastic(1, 3, 2, 2);
  off.parallel.elastic = "off";
  EXPECT_EQ(fitLayoutToWorld(off, 8).config.parallel.dp, 3);
}

TEST(ElasticLayout, RefusesAWorldThatIsNoMultipleOfTheModelRanks) {
  expectErrorNaming([] { fitLayoutToWorld(elastic(1, 3, 2, 2), 6); },
                    {"6 ranks are not a multiple of pp x cp x tp = 4"});
  expectErrorNaming([] { fitLayoutToWorld(elastic(1, 3, 1, 1), 5); },
                    {"global batch 12 is not a multiple of micro_batch 2 x dp 5"});
}

}  // namespace
}  // namespace strata::train
