// The `strata` command line: a CLI11 program whose subcommands (train,
// launch, ...) each declare their flags (cli_flags.h) and say what to run.
//
// Nothing here blocks but the command that runs. parseCommandLine throws
// FlagError, naming the command, for an unknown command or flag, an
// unexpected argument, a missing or malformed value, or flags that exclude
// each other; --help and --version leave it as CLI::CallForHelp and
// CLI::CallForVersion.
#pragma once

#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

namespace CLI {
class App;
}  // namespace CLI

namespace strata {

// One subcommand: the CLI11 command its flags are declared on, and what it
// does once they are parsed. `run` returns the process exit code.
struct Subcommand {
  CLI::App* command;
  std::function<int()> run;
};

// Parses `args`, the words after the program's name, into `program`. It
// sets `program` and its commands to keep the words they cannot place, and
// names those itself.
void parseCommandLine(CLI::App& program, std::vector<std::string> args);

// Parses `args` and runs the subcommand they name. Returns 0 after printing
// --help or --version to `out`; 2 for a FlagError or any other ConfigError
// (printed to `err`, with `program`'s help when no command was named); 1
// for any other error of the run; otherwise what the subcommand returns.
int runCommandLine(CLI::App& program, const std::vector<Subcommand>& subcommands,
                   const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace strata
