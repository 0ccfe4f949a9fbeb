#include "strata/schedule/timeline.h"

#include <algorithm>

#include "strata/schedule/error.h"

namespace strata::schedule {

double Timeline::end() const {
  double latest = 0;
  for (const TimelineItem& item : items) latest = std::max(latest, item.end);
  return latest;
}

void Timeline::check() const {
  for (const TimelineItem& item : items) {
    if (item.rank < 0 || item.rank >= ranks) {
      throw ScheduleError("timeline item '" + item.label + "' is on rank " +
                          std::to_string(item.rank) + ", but the timeline has " +
                          std::to_string(ranks) + " ranks");
    }
    if (item.end < item.start || item.start < 0) {
      throw ScheduleError("timeline item '" + item.label + "' on rank " +
                          std::to_string(item.rank) + " runs from " + std::to_string(item.start) +
                          " to " + std::to_string(item.end));
    }
  }
}

}  // namespace strata::schedule
