#include "strata/schedule/chrome_trace.h"

#include <nlohmann/json.hpp>

#include "strata/schedule/error.h"
#include "strata/util/json.h"

namespace strata::schedule {
namespace {

using Json = nlohmann::ordered_json;

// Names the row of `rank` "rank N" in the viewer.
Json threadName(int rank) {
  return {{"name", "thread_name"},
          {"ph", "M"},
          {"pid", 0},
          {"tid", rank},
          {"args", {{"name", "rank " + std::to_string(rank)}}}};
}

Json completeEvent(const TimelineItem& item, double microsecondsPerUnit) {
  return {{"name", item.label},
          {"cat", item.kind},
          {"ph", "X"},
          {"ts", jsonNumber(item.start * microsecondsPerUnit)},
          {"dur", jsonNumber((item.end - item.start) * microsecondsPerUnit)},
          {"pid", 0},
          {"tid", item.rank}};
}

}  // namespace

std::string toChromeTrace(const Timeline& timeline, double microsecondsPerUnit) {
  timeline.check();
  if (!(microsecondsPerUnit > 0)) {
    throw ScheduleError("microseconds per time unit must be > 0, got " +
                        std::to_string(microsecondsPerUnit));
  }
  Json events = Json::array();
  for (int rank = 0; rank < timeline.ranks; ++rank) events.push_back(threadName(rank));
  for (const TimelineItem& item : timeline.items)
    events.push_back(completeEvent(item, microsecondsPerUnit));
  Json trace = {{"traceEvents", std::move(events)}, {"displayTimeUnit", "ms"}};
  return dumpJson(trace) + "\n";
}

}  // namespace strata::schedule
