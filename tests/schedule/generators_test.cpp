#include "strata/schedule/generators.h"

#include <gtest/gtest.h>

#include <string>

#include "strata/schedule/error.h"
#include "strata/schedule/registry.h"
#include "strata/schedule/validator.h"

namespace strata::schedule {
namespace {

void expectValid(const Schedule& schedule, const std::string& what) {
  try {
    validate(schedule);
  } catch (const ValidationError& error) {
    ADD_FAILURE() << what << ": " << error.what();
  }
}

TEST(Generators, SingleChunkSchedulesValidateForManySizes) {
  for (int ranks = 1; ranks <= 8; ++ranks) {
    for (int microbatches = 1; microbatches <= 3 * ranks + 1; ++microbatches) {
      const std::string what = "p=" + std::to_string(ranks) + " m=" + std::to_string(microbatches);
      expectValid(gpipe(ranks, microbatches), "gpipe " + what);
      expectValid(oneFOneB(ranks, microbatches), "1f1b " + what);
      expectValid(zeroBubbleH1(ranks, microbatches), "zb-h1 " + what);
    }
  }
}

TEST(Generators, InterleavedValidatesForManySizes) {
  for (int ranks = 1; ranks <= 6; ++ranks) {
    for (int groups = 1; groups <= 4; ++groups) {
      for (int chunks = 1; chunks <= 4; ++chunks) {
        const int microbatches = groups * ranks;
        const Schedule schedule = interleavedOneFOneB(ranks, microbatches, chunks);
        EXPECT_EQ(schedule.stages(), ranks * chunks);
        expectValid(schedule, "interleaved p=" + std::to_string(ranks) + " m=" +
                                  std::to_string(microbatches) + " v=" + std::to_string(chunks));
      }
    }
  }
}

TEST(Generators, EveryActionAppearsOnceAndOnItsRank) {
  const Schedule schedule = zeroBubbleH1(4, 8);
  EXPECT_EQ(schedule.actionCount(), 4u * 8u * 3u);
  for (int rank = 0; rank < 4; ++rank) {
    for (const Action& action : schedule.actions(rank)) EXPECT_EQ(action.stage, rank);
  }
}

TEST(Generators, InterleavedNeedsWholeGroupsOfMicrobatches) {
  try {
    interleavedOneFOneB(4, 6, 2);
    FAIL() << "accepted 6 microbatches on 4 ranks";
  } catch (const ScheduleError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("6 microbatches on 4 ranks"), std::string::npos) << message;
  }
}

TEST(Generators, RejectNonPositiveSizes) {
  EXPECT_THROW(gpipe(0, 4), ScheduleError);
  EXPECT_THROW(oneFOneB(2, 0), ScheduleError);
  EXPECT_THROW(interleavedOneFOneB(2, 2, 0), ScheduleError);
  EXPECT_THROW(zeroBubbleH1(-1, 2), ScheduleError);
}

TEST(Registry, GeneratesEveryKnownSchedule) {
  EXPECT_EQ(generatorNames(), (std::vector<std::string>{"gpipe", "1f1b", "interleaved-1f1b",
                                                        "zb-h1", "zb-v", "dualpipe-v"}));
  for (const GeneratorInfo& info : knownGenerators()) {
    const Schedule schedule = generate(info.name, {4, 8, info.takesVirtualStages ? 2 : 1});
    expectValid(schedule, info.name);
    EXPECT_EQ(schedule.stages(), 4 * (info.takesVirtualStages ? 2 : info.stagesPerRank));
  }
}

// The trainer cuts its layers by this map before any schedule exists; it
// must be the generator's own.
TEST(Registry, StagePlacementIsTheGeneratedSchedules) {
  for (const GeneratorInfo& info : knownGenerators()) {
    const int v = info.takesVirtualStages ? 2 : 1;
    EXPECT_EQ(stagePlacement(info.name, 3, v), generate(info.name, {3, 6, v}).stageRanks())
        << info.name;
  }
  EXPECT_EQ(stagePlacement("zb-v", 2, 1), (std::vector<int>{0, 1, 1, 0}));
  EXPECT_THROW(stagePlacement("zb-h2", 2, 1), ScheduleError);
}

TEST(Registry, UnknownNameListsKnownOnes) {
  try {
    generate("zb-h2", {4, 8, 1});
    FAIL() << "accepted zb-h2";
  } catch (const ScheduleError& error) {
    EXPECT_STREQ(error.what(),
                 "unknown schedule 'zb-h2'; known schedules: gpipe, 1f1b, interleaved-1f1b, zb-h1, "
                 "zb-v, dualpipe-v");
  }
}

TEST(Registry, VirtualStagesOnlyForInterleaved) {
  try {
    generate("1f1b", {4, 8, 2});
    FAIL() << "accepted virtual stages for 1f1b";
  } catch (const ScheduleError& error) {
    EXPECT_NE(std::string(error.what()).find("virtual stages 2"), std::string::npos);
  }
  try {
    generate("zb-v", {4, 8, 3});
    FAIL() << "accepted virtual stages for zb-v";
  } catch (const ScheduleError& error) {
    EXPECT_NE(std::string(error.what()).find("'zb-v' has 2 stages per rank, but virtual stages 3"),
              std::string::npos)
        << error.what();
  }
}

}  // namespace
}  // namespace strata::schedule
