#include "strata/plan/comm.h"

#include <gtest/gtest.h>

#include <cmath>

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

// A shared-memory transport's copies slow down once a message outgrows the
// caches: past largeMessageBytes the further bytes move at largeBandwidth.
TEST(Comm, LargeMessagesMoveAtTheLargeMessageRate) {
  Link link{4e9, 50e-6, 8e6, 2e9};
  EXPECT_DOUBLE_EQ(link.transferSeconds(4e6), 1e-3);                     // below: the base rate
  EXPECT_DOUBLE_EQ(link.transferSeconds(8e6), 2e-3);                     // the boundary: continuous
  EXPECT_DOUBLE_EQ(link.transferSeconds(16e6), 2e-3 + 4e-3);             // 8 MB more at 2 GB/s
  EXPECT_DOUBLE_EQ((Link{4e9, 0}).transferSeconds(16e6), 4e-3);          // one rate for every size
  EXPECT_DOUBLE_EQ((Link{4e9, 0, 8e6, 0}).transferSeconds(16e6), 4e-3);  // no large rate given
  EXPECT_DOUBLE_EQ(pointToPointSeconds(16e6, link), 6e-3 + 50e-6);
  // 2 ranks: 2(p-1)/p = 1 of the message, 2 latencies.
  EXPECT_DOUBLE_EQ(allReduceSeconds(16e6, 2, link), 6e-3 + 100e-6);
  EXPECT_DOUBLE_EQ(allGatherSeconds(16e6, 2, link), 3e-3 + 50e-6);
}

// E[max of p standard normals] in closed form for p <= 3: 1/sqrt(pi) and
// 3/(2 sqrt(pi)); for 4, the tabulated 1.0293754 (order statistics tables).
TEST(Comm, ExpectedSlowestOfNormalsMatchesClosedForms) {
  double rootPi = std::sqrt(M_PI);
  EXPECT_EQ(expectedMaximumOfNormals(1), 0);
  EXPECT_NEAR(expectedMaximumOfNormals(2), 1 / rootPi, 1e-9);
  EXPECT_NEAR(expectedMaximumOfNormals(3), 1.5 / rootPi, 1e-9);
  EXPECT_NEAR(expectedMaximumOfNormals(4), 1.0293754, 1e-6);
  EXPECT_GT(expectedMaximumOfNormals(1024), expectedMaximumOfNormals(512));
}

// sigma(t) = sqrt((spread t)^2 + jitter^2 t): lasting differences grow with
// the work, random disturbances with its square root.
TEST(Comm, SyncWaitIsTheDeviationTimesTheSlowestArrival) {
  double pair = 1 / std::sqrt(M_PI);
  EXPECT_NEAR(syncWaitSeconds(2.0, 2, {0.1, 0}), 0.2 * pair, 1e-12);
  EXPECT_NEAR(syncWaitSeconds(4.0, 2, {0, 0.01}), 0.02 * pair, 1e-12);
  EXPECT_NEAR(syncWaitSeconds(4.0, 2, {0.1, 0.01}), std::sqrt(0.16 + 0.0004) * pair, 1e-12);
  EXPECT_NEAR(syncWaitSeconds(1.0, 3, {0.1, 0}), 0.1 * 1.5 * pair, 1e-9);
  EXPECT_EQ(syncWaitSeconds(4.0, 1, {0.1, 0.01}), 0);  // no one to wait for
  EXPECT_EQ(syncWaitSeconds(4.0, 8, {}), 0);           // identical devices
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

// Point-to-point transfers take the cluster's p2p path on their side of the
// node boundary, else the collectives' link.
TEST(Comm, PointToPointTakesItsOwnPathWhereTheClusterHasOne) {
  Cluster c = clusterPreset("cpu-local");
  c.nodes = 2;
  EXPECT_EQ(&groupPointToPointLink(c, 1, 2), &c.intraNode);
  EXPECT_EQ(&groupPointToPointLink(c, 2, 2), &c.interNode);
  c.intraNodeP2p = Link{8e9, 5e-6};
  EXPECT_EQ(&groupPointToPointLink(c, 1, 2), &*c.intraNodeP2p);
  EXPECT_EQ(&groupPointToPointLink(c, 2, 2), &c.interNode);  // no path of its own between nodes
  c.interNodeP2p = Link{1e9, 20e-6};
  EXPECT_EQ(&groupPointToPointLink(c, 2, 2), &*c.interNodeP2p);
  EXPECT_EQ(&groupLink(c, 1, 2), &c.intraNode);  // collectives keep theirs
}

}  // namespace
}  // namespace strata::plan
