// The schedule file format, written by hand or by `formatSchedule`:
//
//   # 1F1B on two ranks          <- `#` starts a comment anywhere on a line
//   ranks 2 stages 2 microbatches 3
//   stage-ranks 0 1              <- optional; round-robin (stage % ranks) if absent
//   rank 0: 0F0 0F1 0B0 0F2 0B1 0B2
//   rank 1: 1F0 1B0 1F1 1B1 1F2 1B2
//
// A `+` joins the two actions of an overlapped pair (schedule.h): `0F2+3B0`.
// The header line comes first. A rank may have several `rank N:` lines; their
// actions are appended in order. parseSchedule and readScheduleFile throw
// ScheduleError naming the line number and the bad token; they check syntax and
// ranges of the header only, not whether the schedule runs (see validator.h).
#pragma once

#include <string>

#include "strata/schedule/schedule.h"

namespace strata::schedule {

Schedule parseSchedule(const std::string& text);
std::string formatSchedule(const Schedule& schedule);
// Throws ScheduleError naming the path when it cannot be read.
Schedule readScheduleFile(const std::string& path);

}  // namespace strata::schedule
