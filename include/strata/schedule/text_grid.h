// Plain-text pictures of a schedule, for terminals and error messages.
// Neither function throws for a schedule of any shape; renderTimeGrid throws
// ScheduleError for a malformed timeline (see timeline.h).
#pragma once

#include <string>
#include <vector>

#include "strata/schedule/schedule.h"
#include "strata/schedule/timeline.h"

namespace strata::schedule {

struct GridMark {
  int rank = 0;
  int step = 0;
};

// Rows are steps (positions in each rank's list), columns are ranks. Marked
// cells read `>0B0<` so an error can point at the action it is about; the
// actions of an overlapped pair read `0F5+` and `+7B2`.
// With `context` >= 0 and some marks, only the rows within `context` steps of
// a mark are shown; the rest fold into `...`.
std::string renderStepGrid(const Schedule& schedule, const std::vector<GridMark>& marks = {},
                           int context = -1);

// Rows are ranks, columns are equal slices of time (the shortest item, or
// coarser so that at most `maxColumns` fit). An item shows its label in its
// first column and `-` in the rest; idle time shows `.`.
std::string renderTimeGrid(const Timeline& timeline, int maxColumns = 120);

}  // namespace strata::schedule
