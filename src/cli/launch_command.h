// `strata launch`: parse the flags, then run the launcher (see launcher.h).
#pragma once

#include "strata/util/command_line.h"

namespace strata {

// Declares `strata launch` on `strata`. Its run returns the launcher's exit
// code (see runLauncher).
Subcommand addLaunchCommand(CLI::App& strata);

}  // namespace strata
