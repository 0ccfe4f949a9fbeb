#include <gtest/gtest.h>

#include "strata/schedule/action.h"
#include "strata/schedule/error.h"
#include "strata/schedule/generators.h"
#include "strata/schedule/schedule_text.h"

namespace strata::schedule {
namespace {

TEST(ActionText, PrintsAndParsesEveryKind) {
  for (const char* token : {"0F3", "1B2", "1I0", "12W345"}) {
    EXPECT_EQ(toString(parseAction(token)), token);
  }
  const Action action = parseAction("3I7");
  EXPECT_EQ(action.stage, 3);
  EXPECT_EQ(action.kind, ActionKind::kBackwardInput);
  EXPECT_EQ(action.microbatch, 7);
}

TEST(ActionText, RejectsMalformedTokensByName) {
  for (const char* token : {"", "F3", "0X3", "0F", "0F3x", "-1F3", "0f3", "99999999999F0"}) {
    try {
      parseAction(token);
      FAIL() << "accepted '" << token << "'";
    } catch (const ScheduleError& error) {
      EXPECT_NE(std::string(error.what()).find("'" + std::string(token) + "'"), std::string::npos)
          << error.what();
    }
  }
}

TEST(ScheduleText, RoundTripsGeneratedSchedules) {
  for (const Schedule& schedule : {oneFOneB(3, 5), interleavedOneFOneB(2, 4, 3), zeroBubbleH1(4, 6),
                                   gpipe(1, 2), zeroBubbleV(3, 5), dualPipeV(2, 5)}) {
    const std::string text = formatSchedule(schedule);
    EXPECT_EQ(formatSchedule(parseSchedule(text)), text);
  }
}

TEST(ScheduleText, ReadsCommentsStageMapAndSplitRankLines) {
  const Schedule schedule = parseSchedule(
      "# a V-shaped placement\n"
      "ranks 2 stages 4 microbatches 1   # header\n"
      "stage-ranks 0 1 1 0\n"
      "rank 0: 0F0\n"
      "rank 1: 1F0 2F0 2B0 1B0\n"
      "rank 0: 3F0 3B0 0B0\n");
  EXPECT_EQ(schedule.rankOf(3), 0);
  EXPECT_FALSE(schedule.hasRoundRobinPlacement());
  EXPECT_EQ(schedule.actions(0).size(), 4u);
  EXPECT_EQ(toString(schedule.actions(0)[1]), "3F0");
  EXPECT_EQ(formatSchedule(parseSchedule(formatSchedule(schedule))), formatSchedule(schedule));
}

TEST(ScheduleText, WritesTheVPlacementAndOverlappedPairs) {
  const Schedule schedule = dualPipeV(2, 4);
  const std::string text = formatSchedule(schedule);
  EXPECT_NE(text.find("ranks 2 stages 4 microbatches 4\nstage-ranks 0 1 1 0\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find(" 0F3+3B1 "), std::string::npos) << text;
  const Schedule reread = parseSchedule(text);
  for (int rank = 0; rank < 2; ++rank) {
    EXPECT_EQ(reread.actions(rank), schedule.actions(rank));
    for (int step = 0; step < static_cast<int>(schedule.actions(rank).size()); ++step) {
      EXPECT_EQ(reread.overlapsNext(rank, step), schedule.overlapsNext(rank, step));
    }
  }
}

void expectParseError(const std::string& text, const std::string& expected) {
  try {
    parseSchedule(text);
    FAIL() << "accepted:\n" << text;
  } catch (const ScheduleError& error) {
    EXPECT_NE(std::string(error.what()).find(expected), std::string::npos) << error.what();
  }
}

TEST(ScheduleText, ParseErrorsNameLineAndToken) {
  expectParseError("", "no 'ranks R stages S microbatches M' header");
  expectParseError("ranks 2 stages two microbatches 1\n", "bad stages 'two'");
  expectParseError("ranks 2 stages 2x microbatches 1\n", "bad stages '2x'");
  expectParseError("ranks 2 stages 2 microbatches 99999999999\n", "bad microbatches '99999999999'");
  expectParseError("ranks 2 stages 2 microbatches 1\nrank 0: 0F0 0Q0\n",
                   "schedule line 2: bad action '0Q0'");
  expectParseError("ranks 2 stages 2 microbatches 1\nrank 5: 0F0\n", "bad rank '5'");
  expectParseError("ranks 2 stages 2 microbatches 1\nstage-ranks 0\n", "lists 1 ranks");
  expectParseError("ranks 2 stages 2 microbatches 1\nstage-ranks 0 0\n", "rank 1 owns no stage");
  expectParseError("ranks 2 stages 2 microbatches 1\nbogus 1\n", "unknown keyword 'bogus'");
  expectParseError("ranks 1 stages 1 microbatches 2\nrank 0: 0F0 0F1+0B0+0B1\n",
                   "schedule line 2: bad overlapped pair '0F1+0B0+0B1'");
  expectParseError("ranks 1 stages 1 microbatches 2\nrank 0: 0F0 0F1+\n", "bad action ''");
  expectParseError("ranks 0 stages 2 microbatches 1\nrank 0:\n", "ranks must be >= 1, got 0");
}

TEST(ScheduleText, UnreadableFileNamesPath) {
  EXPECT_THROW(
      {
        try {
          readScheduleFile("/nonexistent/sched.txt");
        } catch (const ScheduleError& error) {
          EXPECT_NE(std::string(error.what()).find("/nonexistent/sched.txt"), std::string::npos);
          throw;
        }
      },
      ScheduleError);
}

}  // namespace
}  // namespace strata::schedule
