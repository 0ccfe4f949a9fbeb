// `strata data prepare`: tokenizes text or JSON-lines documents into a
// prepared, memory-mapped dataset (strata/data/prepare.h) for
// `strata train --data-prepared PREFIX`.
#pragma once

#include <iosfwd>

#include "strata/util/command_line.h"

namespace strata {

// Declares `prepare` under `strata data`; its run prints the progress and
// the summary to standard error and returns 0, or throws ConfigError naming
// the file and byte offset of a bad input (2 from runCommandLine).
Subcommand addDataPrepareCommand(CLI::App& data);

}  // namespace strata
