// The layout map against the documented rank order, computed here
// independently: rank = tp + TP * (cp + CP * (dp + DP * pp)), ranks in node
// order.
#include "strata/deploy/layout_map.h"

#include <gtest/gtest.h>

#include "k8s_test_util.h"

namespace strata::deploy {
namespace {

train::ParallelConfig degrees(int64_t pp, int64_t dp, int64_t tp, int64_t cp = 1) {
  train::ParallelConfig parallel;
  parallel.pp = pp;
  parallel.dp = dp;
  parallel.cp = cp;
  parallel.tp = tp;
  return parallel;
}

TEST(LayoutMap, EveryRankHasItsNodeAndCoordinatesInTheDocumentedOrder) {
  const int64_t PP = 3, DP = 2, CP = 2, TP = 2;
  std::vector<int64_t> workers = {10, 10, 4};
  ordered_json map = layoutMap(degrees(PP, DP, TP, CP), workers);
  EXPECT_EQ(map["world_size"], 24);
  EXPECT_EQ(map["columns"], ordered_json::parse(R"(["node","pp","dp","cp","tp"])"));
  ASSERT_EQ(map["ranks"].size(), 24u);
  for (int64_t pp = 0; pp < PP; ++pp) {
    for (int64_t dp = 0; dp < DP; ++dp) {
      for (int64_t cp = 0; cp < CP; ++cp) {
        for (int64_t tp = 0; tp < TP; ++tp) {
          int64_t rank = tp + TP * (cp + CP * (dp + DP * pp));
          int64_t node = rank < 10 ? 0 : rank < 20 ? 1 : 2;
          EXPECT_EQ(map["ranks"][rank], (ordered_json{node, pp, dp, cp, tp})) << "rank " << rank;
        }
      }
    }
  }
}

TEST(LayoutMap, NodesListTheirFirstRankAndWorkers) {
  ordered_json map = layoutMap(degrees(2, 2, 2), {3, 3, 2});
  EXPECT_EQ(map["nodes"], ordered_json::parse(R"([{"node":0,"first_rank":0,"workers":3},
                                                  {"node":1,"first_rank":3,"workers":3},
                                                  {"node":2,"first_rank":6,"workers":2}])"));
  EXPECT_EQ(map["pp"], 2);
  EXPECT_EQ(map["dp"], 2);
  EXPECT_EQ(map["tp"], 2);
}

TEST(LayoutMap, RefusesALayoutThatIsNotTheWorldNamingEveryFactor) {
  expectErrorNaming(
      [] {
        layoutMap(degrees(2, 1, 2), {3, 2});
      },
      {"world size 5 != pp 2 x dp 1 x tp 2"});
  expectErrorNaming(
      [] {
        layoutMap(degrees(1, 1, 2, 2), {3, 2});
      },
      {"world size 5 != pp 1 x dp 1 x cp 2 x tp 2"});
}

}  // namespace
}  // namespace strata::deploy
