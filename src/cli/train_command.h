// `strata train`: train a GPT or Llama-family model over any pp x dp x cp x tp
// layout, with ep for its experts (see trainer.h).
#pragma once

#include "strata/util/command_line.h"

namespace strata {

// Declares `strata train` on `strata`. Its run returns 0 on success, 2 for
// bad flags or configuration (the same on every rank), 1 for a failure while
// training.
Subcommand addTrainCommand(CLI::App& strata);

}  // namespace strata
