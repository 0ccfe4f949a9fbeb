// `strata debug flight DIR`: the flight recorder's cross-rank diagnosis of a
// job (strata/runtime/flight_recorder.h) from the rank-*.flight files in DIR,
// as the launcher prints it when a job fails.
#pragma once

#include <ostream>
#include <vector>

#include "strata/util/command_line.h"

namespace strata {

// Returns 0; 1 when DIR holds no flight records or a malformed one
// (runCommandLine).
std::vector<Subcommand> addDebugCommands(CLI::App& strata, std::ostream& out);

}  // namespace strata
