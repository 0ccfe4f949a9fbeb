// `strata simulate`: build or read a pipeline schedule, validate it, simulate
// its timing and print the timeline grid and a summary (makespan, bubble and
// peak activation stash per rank); optionally write an SVG timeline, a
// Chrome-trace JSON file and the schedule's text form.
//
// Never blocks. Its run returns 0 on success, 2 for flags that conflict
// (FlagError), 1 for a schedule that is unknown, invalid or unreadable, or an
// output file that cannot be written.
#pragma once

#include "strata/util/command_line.h"

namespace strata {

// Declares `strata simulate` on `strata`.
Subcommand addSimulateCommand(CLI::App& strata);

}  // namespace strata
