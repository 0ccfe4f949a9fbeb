#include "strata/schedule/simulator.h"

#include <gtest/gtest.h>

#include <string>

#include "strata/schedule/error.h"
#include "strata/schedule/generators.h"
#include "strata/schedule/schedule_text.h"
#include "strata/schedule/stash.h"

namespace strata::schedule {
namespace {

// F costs 1 and B costs 2, split as I = W = 1: the textbook setting.
CostModel unitCosts(double scale = 1) {
  CostModel costs;
  costs.uniform = {1 * scale, 2 * scale, 1 * scale, 1 * scale};
  return costs;
}

double gpipeBubble(int p, int m) { return (p - 1.0) / (m + p - 1.0); }

TEST(Simulator, GPipeBubbleIsTextbook) {
  for (const auto& [p, m] : {std::pair{4, 8}, {2, 5}, {8, 3}, {1, 4}}) {
    const SimulationResult result = simulate(gpipe(p, m), unitCosts());
    EXPECT_DOUBLE_EQ(result.makespan, 3.0 * (m + p - 1));
    for (const RankSummary& rank : result.ranks) {
      EXPECT_NEAR(rank.bubbleFraction, gpipeBubble(p, m), 1e-12) << "p=" << p << " m=" << m;
      EXPECT_EQ(rank.peakStash, m);
    }
  }
}

TEST(Simulator, OneFOneBKeepsGPipeBubbleButStashesAtMostRanks) {
  for (const auto& [p, m] : {std::pair{4, 8}, {4, 16}, {3, 7}, {8, 8}, {2, 1}}) {
    const SimulationResult result = simulate(oneFOneB(p, m), unitCosts());
    EXPECT_NEAR(result.makespan, simulate(gpipe(p, m), unitCosts()).makespan, 1e-9);
    for (int rank = 0; rank < p; ++rank) {
      EXPECT_NEAR(result.ranks[rank].bubbleFraction, gpipeBubble(p, m), 1e-12);
      EXPECT_EQ(result.ranks[rank].peakStash, std::min(p - rank, m)) << "rank " << rank;
    }
  }
  // The headline: stage 0 holds p microbatches, not m.
  EXPECT_EQ(simulate(oneFOneB(4, 32), unitCosts()).ranks[0].peakStash, 4);
  EXPECT_EQ(simulate(gpipe(4, 32), unitCosts()).ranks[0].peakStash, 32);
}

TEST(Simulator, InterleavingDividesTheBubbleByVirtualStages) {
  for (const auto& [p, m, v] : {std::tuple{4, 8, 2}, {4, 8, 4}, {2, 4, 2}, {3, 9, 3}, {4, 4, 2}}) {
    // Each chunk holds 1/v of a rank's layers, so the work per rank is unchanged.
    const SimulationResult plain = simulate(oneFOneB(p, m), unitCosts());
    const SimulationResult interleaved = simulate(interleavedOneFOneB(p, m, v), unitCosts(1.0 / v));
    const std::string what =
        "p=" + std::to_string(p) + " m=" + std::to_string(m) + " v=" + std::to_string(v);
    for (int rank = 0; rank < p; ++rank) {
      EXPECT_NEAR(interleaved.ranks[rank].idle * v, plain.ranks[rank].idle, 1e-9) << what;
      EXPECT_NEAR(interleaved.ranks[rank].bubbleFraction, (p - 1.0) / (v * m + p - 1.0), 1e-9)
          << what;
    }
    EXPECT_EQ(interleaved.peakStashPerStage.size(), static_cast<std::size_t>(p * v));
  }
}

TEST(Simulator, ZeroBubbleH1HasAThirdOfOneFOneBsBubble) {
  for (const auto& [p, m] : {std::pair{4, 8}, {4, 4}, {3, 7}, {2, 5}, {8, 24}}) {
    const SimulationResult plain = simulate(oneFOneB(p, m), unitCosts());
    const SimulationResult zeroBubble = simulate(zeroBubbleH1(p, m), unitCosts());
    for (int rank = 0; rank < p; ++rank) {
      EXPECT_NEAR(zeroBubble.ranks[rank].idle * 3, plain.ranks[rank].idle, 1e-9)
          << "p=" << p << " m=" << m << " rank " << rank;
    }
    // Same peak memory as 1F1B, whose worst rank (stage 0) holds p.
    EXPECT_EQ(zeroBubble.maxPeakStash(), plain.maxPeakStash());
  }
}

TEST(Simulator, LatencyDelaysEveryCrossRankHandOff) {
  CostModel costs = unitCosts();
  costs.latency = 0.5;
  // Forwards cross p - 1 links on the way down, gradients p - 1 on the way up.
  EXPECT_DOUBLE_EQ(simulate(gpipe(4, 8), costs).makespan, 33 + 2 * 3 * 0.5);
}

TEST(Simulator, ReportsStartAndEndOfEveryAction) {
  const SimulationResult result = simulate(oneFOneB(2, 2), unitCosts());
  ASSERT_EQ(result.actions.size(), 8u);
  const TimedAction& firstOnRank1 = result.actions[4];
  EXPECT_EQ(firstOnRank1.rank, 1);
  EXPECT_EQ(toString(firstOnRank1.action), "1F0");
  EXPECT_DOUBLE_EQ(firstOnRank1.start, 1);
  EXPECT_DOUBLE_EQ(firstOnRank1.end, 2);
  for (const RankSummary& rank : result.ranks) {
    EXPECT_DOUBLE_EQ(rank.busy + rank.idle, result.makespan);
  }
}

TEST(Simulator, OverlappedPairRunsBothPassesInOneSpan) {
  const Schedule schedule = parseSchedule(
      "ranks 2 stages 2 microbatches 2\n"
      "rank 0: 0F0 0F1+0B0 0B1\n"
      "rank 1: 1F0 1B0 1F1 1B1\n");
  for (const auto& [overlap, span] : {std::pair{0.0, 3.0}, {0.5, 2.5}, {1.0, 2.0}}) {
    CostModel costs = unitCosts();
    costs.overlap = overlap;
    const SimulationResult result = simulate(schedule, costs);
    const TimedAction& forward = result.actions[1];
    const TimedAction& backward = result.actions[2];
    EXPECT_TRUE(forward.overlapsNext);
    EXPECT_FALSE(backward.overlapsNext);
    // The pair waits for 1B0, which ends at 4, although 0F1 could start at 1.
    EXPECT_DOUBLE_EQ(forward.start, 4);
    EXPECT_DOUBLE_EQ(backward.start, 4);
    EXPECT_DOUBLE_EQ(forward.end, 4 + span);
    EXPECT_DOUBLE_EQ(backward.end, 4 + span);
    EXPECT_DOUBLE_EQ(result.ranks[0].busy, 1 + span + 2) << "overlap " << overlap;
    EXPECT_DOUBLE_EQ(result.ranks[0].busy + result.ranks[0].idle, result.makespan);
  }
}

TEST(Simulator, CountsMessagesBetweenRanks) {
  // Each microbatch crosses p - 1 links down and p - 1 up.
  EXPECT_EQ(simulate(gpipe(4, 8), unitCosts()).messages, 2 * 8 * 3);
  EXPECT_EQ(simulate(gpipe(1, 8), unitCosts()).messages, 0);
}

TEST(Simulator, SlowStageSetsThePace) {
  CostModel costs;
  costs.perStage.assign(4, StageCosts{1, 2, 1, 1});
  costs.perStage[2] = {2, 4, 2, 2};
  const SimulationResult result = simulate(oneFOneB(4, 8), costs);
  EXPECT_GE(result.makespan, 8 * 6);
  for (int rank : {0, 1, 3}) {
    EXPECT_LT(result.ranks[2].bubbleFraction, result.ranks[rank].bubbleFraction);
  }
}

TEST(Simulator, RejectsBadCostsAndInvalidSchedules) {
  CostModel costs;
  costs.perStage.assign(3, StageCosts{});
  try {
    simulate(oneFOneB(4, 4), costs);
    FAIL() << "accepted a 3-stage cost table for 4 stages";
  } catch (const ScheduleError& error) {
    EXPECT_STREQ(error.what(), "the cost table has 3 stages, but the schedule has 4");
  }
  CostModel negative = unitCosts();
  negative.latency = -1;
  EXPECT_THROW(simulate(oneFOneB(2, 2), negative), ScheduleError);
  CostModel tooMuchOverlap = unitCosts();
  tooMuchOverlap.overlap = 1.5;
  try {
    simulate(oneFOneB(2, 2), tooMuchOverlap);
    FAIL() << "accepted overlap 1.5";
  } catch (const ScheduleError& error) {
    EXPECT_NE(std::string(error.what()).find("overlap must be in [0, 1], got 1.5"),
              std::string::npos)
        << error.what();
  }
  EXPECT_THROW(
      simulate(parseSchedule("ranks 1 stages 1 microbatches 1\nrank 0: 0B0 0F0\n"), unitCosts()),
      ValidationError);
}

TEST(Stash, CountsSplitBackwardUntilTheWeightGradient) {
  const StashPeaks peaks =
      peakStash(parseSchedule("ranks 1 stages 1 microbatches 2\n"
                              "rank 0: 0F0 0I0 0F1 0W0 0I1 0W1\n"));
  EXPECT_EQ(peaks.perRank[0], 2);
  EXPECT_EQ(peaks.perStage[0], 2);
}

}  // namespace
}  // namespace strata::schedule
