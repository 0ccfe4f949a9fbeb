// ZB-V and DualPipeV held to the formulas stated in generators.h and
// docs/schedules.md, for sizes that include microbatch counts that are not a
// multiple of the ranks.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "strata/schedule/error.h"
#include "strata/schedule/generators.h"
#include "strata/schedule/simulator.h"
#include "strata/schedule/stash.h"
#include "strata/schedule/validator.h"

namespace strata::schedule {
namespace {

// F = I = W = 1 per stage, B = I + W: the setting of the stated formulas.
CostModel unitCostsOverlapping(double overlap = 0) {
  CostModel costs;
  costs.uniform = {1, 2, 1, 1};
  costs.overlap = overlap;
  return costs;
}

std::string sizes(int p, int m) { return "p=" + std::to_string(p) + " m=" + std::to_string(m); }

int overlappedPairs(const Schedule& schedule, int rank) {
  int pairs = 0;
  for (int step = 0; step < static_cast<int>(schedule.actions(rank).size()); ++step) {
    pairs += schedule.overlapsNext(rank, step) ? 1 : 0;
  }
  return pairs;
}

TEST(VPlacement, PutsTheFirstAndLastStageOnRankZero) {
  EXPECT_EQ(vPlacement(4), (std::vector<int>{0, 1, 2, 3, 3, 2, 1, 0}));
  EXPECT_EQ(vPlacement(1), (std::vector<int>{0, 0}));
  EXPECT_THROW(vPlacement(0), ScheduleError);
  for (const Schedule& schedule : {zeroBubbleV(4, 8), dualPipeV(4, 8)}) {
    EXPECT_EQ(schedule.stageRanks(), vPlacement(4));
    EXPECT_EQ(schedule.stagesOn(0), (std::vector<int>{0, 7}));
    // The hand-off between the V's arms stays on the last rank.
    EXPECT_EQ(schedule.rankOf(3), schedule.rankOf(4));
  }
}

TEST(VSchedules, ValidateForManySizes) {
  for (int p = 1; p <= 8; ++p) {
    for (int m = 1; m <= 4 * p + 1; ++m) {
      EXPECT_NO_THROW(validate(zeroBubbleV(p, m))) << "zb-v " << sizes(p, m);
      if (m >= 2 * p) {
        EXPECT_NO_THROW(validate(dualPipeV(p, m))) << "dualpipe-v " << sizes(p, m);
      }
    }
  }
}

// Every (p, m) with p <= 8 and m <= 3p + 1 (dualpipe-v: from m = 2p): m below,
// at and above 2p - 1, and mostly not a multiple of p.
template <typename Check>
void forEachSize(int fewestPerStage, const Check& check) {
  for (int p = 1; p <= 8; ++p) {
    for (int m = std::max(1, fewestPerStage * 2 * p); m <= 3 * p + 1; ++m) check(p, m);
  }
}

TEST(ZeroBubbleV, BubbleIsPMinusOneOnceThePipeIsFull) {
  forEachSize(0, [](int p, int m) {
    const SimulationResult result = simulate(zeroBubbleV(p, m), unitCostsOverlapping());
    const double idle = std::max(p - 1, 4 * p - 2 * m - 2);
    EXPECT_DOUBLE_EQ(result.makespan, 6.0 * m + idle) << sizes(p, m);
    for (int rank = 0; rank < p; ++rank) {
      EXPECT_DOUBLE_EQ(result.ranks[rank].idle, idle) << sizes(p, m) << " rank " << rank;
    }
  });
}

TEST(ZeroBubbleV, PeakStashIsTwoPChunksOnEveryRank) {
  forEachSize(0, [](int p, int m) {
    const StashPeaks peaks = peakStash(zeroBubbleV(p, m));
    for (int rank = 0; rank < p; ++rank) {
      EXPECT_EQ(peaks.perRank[rank], std::min({2 * p, 2 * m, m + rank + 1}))
          << sizes(p, m) << " rank " << rank;
    }
  });
}

TEST(ZeroBubbleV, SendsTwiceOneFOneBsMessages) {
  forEachSize(0, [](int p, int m) {
    const int oneFOneBMessages = simulate(oneFOneB(p, m), unitCostsOverlapping()).messages;
    EXPECT_EQ(oneFOneBMessages, 2 * m * (p - 1)) << sizes(p, m);
    EXPECT_EQ(simulate(zeroBubbleV(p, m), unitCostsOverlapping()).messages, 2 * oneFOneBMessages)
        << sizes(p, m);
  });
}

TEST(ZeroBubbleV, HasASixthOfOneFOneBsBubbleAtItsMemory) {
  for (const auto& [p, m] : {std::pair{4, 8}, {3, 7}, {8, 16}, {5, 9}}) {
    // 1F1B's stage is two V chunks: twice the cost, twice the activations.
    CostModel doubled;
    doubled.uniform = {2, 4, 2, 2};
    const SimulationResult plain = simulate(oneFOneB(p, m), doubled);
    const SimulationResult v = simulate(zeroBubbleV(p, m), unitCostsOverlapping());
    EXPECT_DOUBLE_EQ(v.ranks[0].idle * 6, plain.ranks[0].idle) << sizes(p, m);
    EXPECT_EQ(v.maxPeakStash(), 2 * plain.maxPeakStash()) << sizes(p, m);
  }
}

TEST(DualPipeV, BubbleShrinksWithTheOverlap) {
  for (const double overlap : {0.0, 0.5, 1.0}) {
    forEachSize(1, [&](int p, int m) {
      const SimulationResult result = simulate(dualPipeV(p, m), unitCostsOverlapping(overlap));
      for (int rank = 0; rank < p; ++rank) {
        const double idle = (1 - overlap) * 2 * (p - 1) + overlap * std::min(rank + 1, p - 1);
        EXPECT_DOUBLE_EQ(result.ranks[rank].idle, idle)
            << sizes(p, m) << " overlap " << overlap << " rank " << rank;
      }
    });
  }
}

TEST(DualPipeV, HoldsOneChunkMoreThanZeroBubbleV) {
  forEachSize(1, [](int p, int m) {
    const SimulationResult result = simulate(dualPipeV(p, m), unitCostsOverlapping());
    for (const RankSummary& rank : result.ranks) EXPECT_EQ(rank.peakStash, 2 * p + 1);
    EXPECT_EQ(result.messages, 4 * m * (p - 1)) << sizes(p, m);
  });
}

TEST(DualPipeV, OverlapsEveryForwardOfTheSteadyState) {
  forEachSize(1, [](int p, int m) {
    const Schedule schedule = dualPipeV(p, m);
    for (int rank = 0; rank < p; ++rank) {
      const int unpairedOnLastRank = rank == p - 1 ? 1 : 0;
      EXPECT_EQ(overlappedPairs(schedule, rank), 2 * m - 3 * p + rank + 1 - unpairedOnLastRank)
          << sizes(p, m) << " rank " << rank;
    }
  });
}

TEST(DualPipeV, NeedsOneMicrobatchPerStage) {
  try {
    dualPipeV(4, 7);
    FAIL() << "accepted 7 microbatches on 4 ranks";
  } catch (const ScheduleError& error) {
    EXPECT_NE(std::string(error.what()).find("7 microbatches on 4 ranks"), std::string::npos)
        << error.what();
  }
  EXPECT_THROW(zeroBubbleV(0, 4), ScheduleError);
  EXPECT_THROW(dualPipeV(2, 0), ScheduleError);
}

}  // namespace
}  // namespace strata::schedule
