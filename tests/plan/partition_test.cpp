#include "strata/plan/partition.h"

#include <gtest/gtest.h>

#include "strata/plan/errors.h"

namespace strata::plan {
namespace {

std::vector<LayerCost> oneHeavyLayer() {
  // Eight unit layers, the third ten times heavier than the rest.
  std::vector<LayerCost> layers(8, {1.0, 1.0});
  layers[2] = {10.0, 1.0};
  return layers;
}

// Every layer appears in exactly one stage, in order: no drop, no duplicate.
void expectCoversEveryLayerOnce(const Partition& p, int layers) {
  int next = 0;
  for (const StageReport& s : p.stages) {
    EXPECT_EQ(s.firstLayer, next);
    EXPECT_GE(s.numLayers, 1);
    next += s.numLayers;
  }
  EXPECT_EQ(next, layers);
}

TEST(Partition, BalancedBeatsEqualCountsWithOneHeavyLayer) {
  auto layers = oneHeavyLayer();
  Partition equal = partitionByCounts(layers, {2, 2, 2, 2});
  Partition balanced = partitionBalanced(layers, 4);
  EXPECT_DOUBLE_EQ(equal.slowestSeconds(), 11.0);     // the heavy layer shares its stage
  EXPECT_DOUBLE_EQ(balanced.slowestSeconds(), 10.0);  // the heavy layer alone
  EXPECT_LT(balanced.slowestSeconds(), equal.slowestSeconds());
  expectCoversEveryLayerOnce(balanced, 8);
  expectCoversEveryLayerOnce(equal, 8);
}

TEST(Partition, ReportsTimeAndMemoryOfEveryStage) {
  std::vector<LayerCost> layers = {{1, 10}, {2, 20}, {3, 30}, {4, 40}};
  Partition p = partitionByCounts(layers, {1, 3});
  ASSERT_EQ(p.stages.size(), 2u);
  EXPECT_DOUBLE_EQ(p.stages[0].seconds, 1);
  EXPECT_DOUBLE_EQ(p.stages[0].bytes, 10);
  EXPECT_DOUBLE_EQ(p.stages[1].seconds, 9);
  EXPECT_DOUBLE_EQ(p.stages[1].bytes, 90);
  EXPECT_EQ(p.counts(), (std::vector<int>{1, 3}));
}

TEST(Partition, BalancedIsOptimalOnSmallCasesByBruteForce) {
  std::vector<LayerCost> layers = {{3, 1}, {1, 1}, {4, 1}, {1, 1}, {5, 1}, {9, 1}, {2, 1}};
  // All cuts into 3 stages: the best slowest stage by exhaustion.
  double best = 1e9;
  for (int a = 1; a < 6; ++a)
    for (int b = a + 1; b < 7; ++b) {
      auto p = partitionByCounts(layers, {a, b - a, 7 - b});
      best = std::min(best, p.slowestSeconds());
    }
  EXPECT_DOUBLE_EQ(partitionBalanced(layers, 3).slowestSeconds(), best);
}

TEST(Partition, MemoryLimitForcesASlowerButFeasibleCut) {
  // Time alone would isolate the heavy first layer; memory forbids the rest
  // from sharing one stage.
  std::vector<LayerCost> layers = {{10, 1}, {1, 5}, {1, 5}, {1, 5}};
  Partition free = partitionBalanced(layers, 2);
  EXPECT_EQ(free.counts(), (std::vector<int>{1, 3}));
  Partition limited = partitionBalanced(layers, 2, 11);
  EXPECT_LE(limited.largestBytes(), 11);
  EXPECT_EQ(limited.counts(), (std::vector<int>{2, 2}));
  expectCoversEveryLayerOnce(limited, 4);
}

TEST(Partition, ErrorsNameTheValues) {
  auto layers = oneHeavyLayer();
  try {
    partitionBalanced(layers, 9);
    FAIL();
  } catch (const PlanError& e) {
    EXPECT_NE(std::string(e.what()).find("8 layers into 9 stages"), std::string::npos);
  }
  try {
    partitionBalanced(layers, 2, 3.0);
    FAIL();
  } catch (const PlanError& e) {
    EXPECT_NE(std::string(e.what()).find("smallest limit any cut meets is 4"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(partitionByCounts(layers, {4, 3}), PlanError);  // sums to 7
  EXPECT_THROW(partitionByCounts(layers, {8, 0}), PlanError);  // empty stage
  EXPECT_THROW(partitionBalanced({{-1, 0}}, 1), PlanError);    // negative cost
  EXPECT_THROW(partitionBalanced(layers, 0), PlanError);
}

}  // namespace
}  // namespace strata::plan
