// `strata simulate`: build or read a pipeline schedule, validate it, simulate
// its timing and print the timeline grid and a summary (makespan, bubble and
// peak activation stash per rank); optionally write an SVG timeline, a
// Chrome-trace JSON file and the schedule's text form.
//
// `args` excludes the program and subcommand names. Returns 0 on success (and
// for --help), 2 for bad flags (message on stderr), 1 for a schedule that is
// unknown, invalid or unreadable, or an output file that cannot be written.
// Never blocks.
#pragma once

#include <string>
#include <vector>

namespace strata {

int simulateCommand(const std::vector<std::string>& args);

}  // namespace strata
