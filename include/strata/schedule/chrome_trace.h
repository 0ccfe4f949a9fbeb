// Chrome-trace JSON (chrome://tracing, Perfetto) for a timeline: one complete
// ("ph":"X") event per item, with pid 0 and tid = rank, plus one thread-name
// metadata event per rank so viewers label rows "rank N". Timestamps are
// microseconds: item times are multiplied by `microsecondsPerUnit`. Written
// as strata/util/json.h writes all JSON (one line, labels escaped, a
// non-finite time null), followed by a newline.
// Throws ScheduleError for a malformed timeline or a non-positive scale.
#pragma once

#include <string>

#include "strata/schedule/timeline.h"

namespace strata::schedule {

std::string toChromeTrace(const Timeline& timeline, double microsecondsPerUnit = 1000);

}  // namespace strata::schedule
