#include "strata/runtime/layout.h"

#include <gtest/gtest.h>

#include "strata/error.h"

namespace strata {
namespace {

std::string errorOf(int world, ParallelDegrees d) {
  try {
    ParallelLayout layout(world, d);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

TEST(Layout, WorkedExampleFromTheHeader) {
  ParallelLayout layout(8, {2, 2, 1, 2});
  Coord c = layout.coordOf(5);
  EXPECT_EQ(c.tp, 1);
  EXPECT_EQ(c.dp, 0);
  EXPECT_EQ(c.pp, 1);
  EXPECT_EQ(layout.groupRanks(Dim::kTensor, 5), (std::vector<int>{4, 5}));
  EXPECT_EQ(layout.groupRanks(Dim::kData, 5), (std::vector<int>{5, 7}));
  EXPECT_EQ(layout.groupRanks(Dim::kPipeline, 5), (std::vector<int>{1, 5}));
}

TEST(Layout, EveryRankRoundTripsAndGroupsPartitionTheWorld) {
  for (ParallelDegrees d :
       {ParallelDegrees{1, 1, 1, 1}, ParallelDegrees{2, 1, 1, 2}, ParallelDegrees{3, 2, 1, 1},
        ParallelDegrees{2, 3, 2, 2}, ParallelDegrees{1, 4, 1, 2}}) {
    ParallelLayout layout(d.product(), d);
    for (int rank = 0; rank < layout.worldSize(); ++rank) {
      Coord c = layout.coordOf(rank);
      EXPECT_EQ(layout.rankOf(c), rank);
      EXPECT_LT(c.tp, d.tp);
      EXPECT_LT(c.pp, d.pp);
    }
    for (Dim dim : kAllDims) {
      std::vector<int> seen(layout.worldSize(), 0);
      auto groups = layout.allGroups(dim);
      EXPECT_EQ(static_cast<int>(groups.size()), layout.worldSize() / d.of(dim));
      for (const auto& group : groups) {
        EXPECT_EQ(static_cast<int>(group.size()), d.of(dim));
        for (size_t i = 0; i < group.size(); ++i) {
          ++seen[group[i]];
          EXPECT_EQ(layout.coordOf(group[i]).of(dim), static_cast<int>(i));
          EXPECT_EQ(layout.groupRanks(dim, group[i]), group);
        }
      }
      for (int count : seen) EXPECT_EQ(count, 1);
    }
  }
}

TEST(Layout, TensorParallelRanksAreNeighbours) {
  ParallelLayout layout(16, {2, 2, 1, 4});
  for (const auto& group : layout.allGroups(Dim::kTensor)) {
    for (size_t i = 1; i < group.size(); ++i) EXPECT_EQ(group[i], group[0] + static_cast<int>(i));
  }
}

TEST(Layout, ErrorsNameEveryFactor) {
  EXPECT_EQ(errorOf(6, {2, 2, 1, 2}), "world size 6 != pp 2 x dp 2 x tp 2 = 8");
  EXPECT_NE(errorOf(4, {0, 2, 1, 2}).find("pp 0"), std::string::npos);
  EXPECT_NE(errorOf(4, {1, -1, 1, 0}).find("dp -1, tp 0"), std::string::npos);
  EXPECT_NE(errorOf(12, {2, 2, 2, 2}).find("cp 2"), std::string::npos);
  ParallelLayout layout(4, {2, 1, 1, 2});
  EXPECT_THROW(layout.coordOf(4), ConfigError);
  EXPECT_THROW(layout.coordOf(-1), ConfigError);
}

TEST(TensorParallelInsideNodes, UnevenNodesThatSplitAGroupAreNamed) {
  ParallelLayout pp5(5, {5, 1, 1, 1});
  EXPECT_NO_THROW(checkTensorParallelInsideNodes(pp5, {3, 2}));  // tp 1: nothing to split
  ParallelLayout dp2tp2(6, {1, 3, 1, 2});
  EXPECT_NO_THROW(checkTensorParallelInsideNodes(dp2tp2, {4, 2}));
  EXPECT_NO_THROW(checkTensorParallelInsideNodes(dp2tp2, {}));  // unknown nodes
  try {
    checkTensorParallelInsideNodes(dp2tp2, {3, 3});
    ADD_FAILURE() << "a tp group spanning two nodes was accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()),
              "tp 2 needs each tensor-parallel group inside one node, but ranks 2-3 span node 0 "
              "(ranks 0-2) and node 1 (ranks 3-5); the nodes run 3,3 workers: give every node a "
              "multiple of 2 workers or choose another tp");
  }
}

}  // namespace
}  // namespace strata
