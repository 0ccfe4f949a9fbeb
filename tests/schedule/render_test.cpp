#include <gtest/gtest.h>

#include <string>

#include "strata/schedule/chrome_trace.h"
#include "strata/schedule/error.h"
#include "strata/schedule/generators.h"
#include "strata/schedule/simulator.h"
#include "strata/schedule/svg.h"
#include "strata/schedule/text_grid.h"

namespace strata::schedule {
namespace {

std::size_t occurrences(const std::string& text, const std::string& part) {
  std::size_t count = 0;
  for (std::size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) {
    ++count;
  }
  return count;
}

Timeline simulatedTimeline(const Schedule& schedule) {
  CostModel costs;
  costs.uniform = {1, 2, 1, 1};
  return toTimeline(simulate(schedule, costs));
}

TEST(StepGrid, ShowsEveryRankAndStep) {
  const std::string grid = renderStepGrid(oneFOneB(2, 2));
  EXPECT_EQ(grid,
            "step | rank 0 | rank 1\n"
            "0    |  0F0   |  1F0  \n"
            "1    |  0F1   |  1B0  \n"
            "2    |  0B0   |  1F1  \n"
            "3    |  0B1   |  1B1  \n");
}

TEST(TimeGrid, AlignsActionsInTime) {
  const std::string grid = renderTimeGrid(simulatedTimeline(oneFOneB(2, 2)));
  EXPECT_EQ(grid,
            "rank 0 | 0F0 0F1 .   .   0B0 --- .   0B1 ---\n"
            "rank 1 | .   1F0 1B0 --- 1F1 1B1 --- .   .  \n"
            "one column = 1\n");
}

TEST(ChromeTrace, HasOneCompleteEventPerAction) {
  const Schedule schedule = zeroBubbleH1(4, 8);
  const std::string json = toChromeTrace(simulatedTimeline(schedule), 1000);
  EXPECT_EQ(json.rfind("{\"traceEvents\":[", 0), 0u);
  EXPECT_EQ(occurrences(json, "\"ph\":\"X\""), schedule.actionCount());
  EXPECT_EQ(occurrences(json, "\"ph\":\"M\""), 4u);
  EXPECT_NE(json.find("{\"name\":\"0F0\",\"cat\":\"F\",\"ph\":\"X\",\"ts\":0,\"dur\":1000,"
                      "\"pid\":0,\"tid\":0}"),
            std::string::npos)
      << json.substr(0, 400);
  EXPECT_EQ(occurrences(json, "{"), occurrences(json, "}"));
  EXPECT_EQ(occurrences(json, "["), occurrences(json, "]"));
}

TEST(ChromeTrace, EscapesLabels) {
  Timeline timeline{1, "ms", {{0, "wait \"peer\"", "wait", 0, 1}}};
  EXPECT_NE(toChromeTrace(timeline).find("wait \\\"peer\\\""), std::string::npos);
}

TEST(Svg, DrawsOneBlockPerActionWithLegendAndAxis) {
  const Schedule schedule = interleavedOneFOneB(4, 8, 2);
  const std::string svg = renderSvg(simulatedTimeline(schedule), "interleaved <1F1B>");
  EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u);
  EXPECT_EQ(occurrences(svg, "<rect class=\"action\""), schedule.actionCount());
  EXPECT_EQ(occurrences(svg, "<rect class=\"row\""), 4u);
  EXPECT_EQ(occurrences(svg, "<rect class=\"legend\""), 4u);
  EXPECT_NE(svg.find("interleaved &lt;1F1B&gt;"), std::string::npos);
  EXPECT_NE(svg.find(">rank 3</text>"), std::string::npos);
  EXPECT_NE(svg.find("empty = idle"), std::string::npos);
  EXPECT_EQ(occurrences(svg, "<text"), occurrences(svg, "</text>"));
  EXPECT_EQ(svg.substr(svg.size() - 7), "</svg>\n");
}

TEST(Svg, ColoursEachKindDistinctly) {
  Timeline timeline{1,
                    "",
                    {{0, "0F0", "F", 0, 1},
                     {0, "0I0", "I", 1, 2},
                     {0, "0W0", "W", 2, 3},
                     {0, "0B1", "B", 3, 5},
                     {0, "wait", "wait", 5, 6}}};
  const std::string svg = renderSvg(timeline);
  for (const char* colour : {"#4c78a8", "#e45756", "#f58518", "#54a24b", "#9d9d9d"}) {
    EXPECT_NE(svg.find(std::string("fill=\"") + colour + "\" stroke"), std::string::npos) << colour;
  }
}

TEST(Renderers, RejectMalformedTimelines) {
  Timeline wrongRank{2, "", {{2, "0F0", "F", 0, 1}}};
  EXPECT_THROW(renderSvg(wrongRank), ScheduleError);
  Timeline backwards{1, "", {{0, "0F0", "F", 2, 1}}};
  EXPECT_THROW(toChromeTrace(backwards), ScheduleError);
  EXPECT_THROW(renderTimeGrid(backwards), ScheduleError);
}

}  // namespace
}  // namespace strata::schedule
