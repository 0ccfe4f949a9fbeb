#include "strata/plan/comm.h"

#include <gtest/gtest.h>

namespace strata::plan {
namespace {

TEST(Comm, AlphaBetaFormulasByHand) {
  Link link{100e9, 5e-6};
  double n = 1e9;
  // 2(p-1)/p n/beta + 2(p-1) alpha with p = 4: 1.5 * 0.01 + 6 * 5e-6
  EXPECT_DOUBLE_EQ(allReduceSeconds(n, 4, link), 1.5 * 0.01 + 30e-6);
  EXPECT_DOUBLE_EQ(allGatherSeconds(n, 4, link), 0.75 * 0.01 + 15e-6);
  EXPECT_DOUBLE_EQ(reduceScatterSeconds(n, 4, link), allGatherSeconds(n, 4, link));
  // An all-reduce is a reduce-scatter followed by an all-gather.
  EXPECT_DOUBLE_EQ(allReduceSeconds(n, 4, link),
                   reduceScatterSeconds(n, 4, link) + allGatherSeconds(n, 4, link));
  EXPECT_DOUBLE_EQ(pointToPointSeconds(n, link), 0.01 + 5e-6);
  EXPECT_EQ(allReduceSeconds(n, 1, link), 0);
}

TEST(Comm, GroupsCrossNodesOnlyWhenTheyMust) {
  Cluster c = clusterPreset("dgx-a100-80gb-ib200");
  c.nodes = 4;
  EXPECT_EQ(&groupLink(c, 1, 8), &c.intraNode);  // tp 8 fills a node
  EXPECT_EQ(&groupLink(c, 1, 4), &c.intraNode);
  EXPECT_EQ(&groupLink(c, 8, 4), &c.interNode);   // dp peers 8 apart
  EXPECT_EQ(&groupLink(c, 2, 4), &c.intraNode);   // tp 2 x dp 4 inside a node
  EXPECT_EQ(&groupLink(c, 1, 16), &c.interNode);  // tp 16 spans two nodes
  EXPECT_EQ(&groupLink(c, 1, 3), &c.interNode);   // 3 does not divide 8: some groups straddle
}

}  // namespace
}  // namespace strata::plan
