// `strata plan`: choose the parallel layout of a GPT model on a cluster and
// predict throughput, memory per device and time to train; or, with
// --layout, predict one fixed layout.
//
// `args` excludes the program and subcommand names. Returns 0 on success (and
// for --help); 2 for invalid input (a bad flag, an unknown preset, an
// unreadable cluster file, a layout that does not fit the job, a cluster too
// small for the model, a batch no layout divides), with the reason on `err`.
// Never blocks.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace strata {

int planCommand(const std::vector<std::string>& args);
int planCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace strata
