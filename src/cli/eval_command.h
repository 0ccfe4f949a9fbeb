// `strata eval`: the loss and perplexity of a checkpoint or Hugging Face
// weights on text (see evaluate_text.h).
#pragma once

#include "strata/util/command_line.h"

namespace strata {

// Declares `strata eval` on `strata`. Its run prints one JSON line and
// returns 0 on success, 2 for bad options or a configuration that cannot be
// used, 1 for any other failure.
Subcommand addEvalCommand(CLI::App& strata);

}  // namespace strata
