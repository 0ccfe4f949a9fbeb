// `strata generate`: sample text from a training checkpoint (see generate.h).
#pragma once

#include "strata/util/command_line.h"

namespace strata {

// Declares `strata generate` on `strata`. Its run returns 0 on success, 2
// when the checkpoint's configuration cannot be used, 1 for any other
// failure.
Subcommand addGenerateCommand(CLI::App& strata);

}  // namespace strata
