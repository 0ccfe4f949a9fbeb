#include <gtest/gtest.h>

#include <limits>
#include <nlohmann/json.hpp>
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

TEST(StepGrid, JoinsOverlappedPairsWithPlus) {
  // One rank runs both arms of the V: 0F0 1F0 0F1 1B0 1F1+0B0 1B1 0I1 0W1.
  const std::string grid = renderStepGrid(dualPipeV(1, 2));
  EXPECT_NE(grid.find("4    |  1F1+ \n5    |  +0B0 \n"), std::string::npos) << grid;
}

TEST(TimeGrid, ShowsAnOverlappedPairAsOneItem) {
  const std::string grid = renderTimeGrid(simulatedTimeline(dualPipeV(1, 2)));
  EXPECT_NE(grid.find("1B0     ---     1F1+0B0 ------- ------- 1B1"), std::string::npos) << grid;
}

using Json = nlohmann::json;

std::size_t eventsOfPhase(const Json& trace, const std::string& phase) {
  std::size_t count = 0;
  for (const Json& event : trace.at("traceEvents")) count += event.at("ph") == phase;
  return count;
}

TEST(ChromeTrace, ParsesWithOneCompleteEventPerAction) {
  const Schedule schedule = zeroBubbleH1(4, 8);
  const std::string text = toChromeTrace(simulatedTimeline(schedule), 1000);
  EXPECT_EQ(text.back(), '\n');
  const Json trace = Json::parse(text);
  EXPECT_EQ(trace.at("displayTimeUnit"), "ms");
  EXPECT_EQ(eventsOfPhase(trace, "X"), schedule.actionCount());
  EXPECT_EQ(eventsOfPhase(trace, "M"), 4u);
  EXPECT_EQ(trace.at("traceEvents").at(3),
            Json::parse(R"({"name":"thread_name","ph":"M","pid":0,"tid":3,)"
                        R"("args":{"name":"rank 3"}})"));
  EXPECT_EQ(trace.at("traceEvents").at(4),
            Json::parse(R"({"name":"0F0","cat":"F","ph":"X","ts":0,"dur":1000,"pid":0,"tid":0})"));
}

TEST(ChromeTrace, OneEventPerOverlappedPair) {
  const Schedule schedule = dualPipeV(1, 2);
  const Json trace = Json::parse(toChromeTrace(simulatedTimeline(schedule)));
  EXPECT_EQ(eventsOfPhase(trace, "X"), schedule.actionCount() - 1);
  bool found = false;
  for (const Json& event : trace.at("traceEvents")) {
    if (event.at("name") != "1F1+0B0") continue;
    found = true;
    EXPECT_EQ(event.at("cat"), "F+B");
    EXPECT_EQ(event.at("dur"), 3000);
  }
  EXPECT_TRUE(found) << trace.dump();
}

TEST(ChromeTrace, EscapesLabelsSoTheyReadBack) {
  const std::string label = "wait \"peer\" C:\\tmp\n\t\x01 end";
  Timeline timeline{1, "ms", {{0, label, "wait", 0, 1}}};
  const Json trace = Json::parse(toChromeTrace(timeline));
  EXPECT_EQ(trace.at("traceEvents").at(1).at("name"), label);
}

TEST(ChromeTrace, BytesThatAreNotUtf8BecomeReplacementCharacters) {
  Timeline timeline{1, "ms", {{0, "bad \xff byte", "F", 0, 1}}};
  const Json trace = Json::parse(toChromeTrace(timeline));
  EXPECT_EQ(trace.at("traceEvents").at(1).at("name"), "bad \xef\xbf\xbd byte");
}

TEST(ChromeTrace, NonFiniteTimesAreNull) {
  const double infinity = std::numeric_limits<double>::infinity();
  Timeline timeline{1, "ms", {{0, "0F0", "F", 0, infinity}}};
  const Json trace = Json::parse(toChromeTrace(timeline));
  EXPECT_EQ(trace.at("traceEvents").at(1).at("ts"), 0);
  EXPECT_TRUE(trace.at("traceEvents").at(1).at("dur").is_null());
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

TEST(Svg, StacksTheTwoPassesOfAnOverlappedPair) {
  const Schedule schedule = dualPipeV(2, 4);
  EXPECT_EQ(occurrences(renderSvg(simulatedTimeline(schedule)), "<rect class=\"action\""),
            schedule.actionCount());
  Timeline pair{1, "", {{0, "0F1+1B0", "F+B", 0, 3}}};
  const std::string svg = renderSvg(pair);
  EXPECT_EQ(occurrences(svg, "<rect class=\"action\""), 2u);
  EXPECT_NE(svg.find("y=\"40\" width=\"960\" height=\"14\" fill=\"#4c78a8\""), std::string::npos)
      << svg;
  EXPECT_NE(svg.find("y=\"54\" width=\"960\" height=\"14\" fill=\"#e45756\""), std::string::npos)
      << svg;
  EXPECT_NE(svg.find(">0F1</text>"), std::string::npos);
  EXPECT_NE(svg.find("<title>0F1+1B0 0-3</title>"), std::string::npos);
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
