// An SVG picture of a timeline that a person reads at a glance: one row per
// rank, one labelled block per item coloured by kind (F, B, I, W; other kinds
// grey), idle time left as empty gaps, a time axis and a legend. An item whose
// kind joins kinds with '+' (an overlapped pair, "F+B") is drawn as one band
// per kind, stacked in the row. Every block or band is a <rect class="action">,
// so tools and tests can count the actions drawn.
// Throws ScheduleError for a malformed timeline (timeline.h).
#pragma once

#include <string>

#include "strata/schedule/timeline.h"

namespace strata::schedule {

std::string renderSvg(const Timeline& timeline, const std::string& title = "");

}  // namespace strata::schedule
