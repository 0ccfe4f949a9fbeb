// A timeline: what each rank did, and when. The simulator's results and the
// traces measured in real runs both become a Timeline, so one set of
// renderers (text_grid.h, chrome_trace.h, svg.h) draws them side by side.
//
// Renderers throw ScheduleError naming the item for a rank outside
// [0, ranks) or an item that ends before it starts.
#pragma once

#include <string>
#include <vector>

namespace strata::schedule {

struct TimelineItem {
  int rank = 0;
  std::string label;  // e.g. "0F3"
  std::string kind;   // "F", "B", "I", "W"; any other kind (e.g. "wait") is drawn neutral
  double start = 0;
  double end = 0;
};

struct Timeline {
  int ranks = 0;
  std::string timeUnit;  // e.g. "ms" for measured traces; empty for simulator units
  std::vector<TimelineItem> items;

  double end() const;  // the latest end, 0 when empty
  // Throws ScheduleError for an item that no renderer could draw.
  void check() const;
};

}  // namespace strata::schedule
