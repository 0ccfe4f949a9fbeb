// `strata export`: a checkpoint as a Hugging Face model, GPT-2 or Llama
// (export_hugging_face.h).
#pragma once

#include <ostream>

#include "strata/util/command_line.h"

namespace strata {

// Returns 0; an error is 2 for a bad flag or format, 1 otherwise
// (runCommandLine).
Subcommand addExportCommand(CLI::App& strata, std::ostream& out);

}  // namespace strata
