// `strata data`: the data tools. `strata data tokenizer` trains a
// SentencePiece tokenizer on the user's text, and encodes or decodes text with
// any tokenizer (strata/data/tokenizer.h); `strata data prepare`
// (data_prepare_command.h) makes a prepared dataset.
#pragma once

#include <iosfwd>
#include <vector>

#include "strata/util/command_line.h"

namespace strata {

// Declares `strata data` and its commands on `strata`; returns the commands
// that run. Their runs print to `out` and return 0 on success; errors are
// thrown (ConfigError naming the file for bad input, 2 from runCommandLine).
std::vector<Subcommand> addDataCommands(CLI::App& strata, std::ostream& out);

}  // namespace strata
