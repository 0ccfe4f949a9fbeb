// `strata checkpoint inspect` and `strata checkpoint convert` (inspect.h,
// checkpoint_convert.h).
#pragma once

#include <ostream>
#include <vector>

#include "strata/util/command_line.h"

namespace strata {

// Declares both on `strata`. Inspect returns 0, or 1 when --verify finds a
// shard that does not match; convert returns 0; any error is 2 for a layout
// the model cannot take, 1 otherwise (runCommandLine).
std::vector<Subcommand> addCheckpointCommands(CLI::App& strata, std::ostream& out);

}  // namespace strata
