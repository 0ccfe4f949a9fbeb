#include "strata/util/command_line.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <ostream>
#include <string>

#include "strata/util/cli_flags.h"

namespace strata {
namespace {

// The subcommand the parse chose, or `program` when it chose none.
const CLI::App& chosenCommand(const CLI::App& program) {
  std::vector<CLI::App*> chosen = program.get_subcommands();
  return chosen.empty() ? program : chosenCommand(*chosen.front());
}

// Every command allows extras, so that a word CLI11 could not place is
// reported here in Strata's words rather than in CLI11's.
void rejectLeftovers(const CLI::App& program) {
  const CLI::App& command = chosenCommand(program);
  for (const std::string& word : program.remaining(true)) {
    // CLI11 keeps a `--` it saw as a leftover; it is the end of the flags.
    if (word == "--") continue;
    if (&command == &program) throw flagError(program, "unknown command '" + word + "'");
    if (word.size() > 1 && word[0] == '-')
      throw flagError(command, "unknown flag '" + word.substr(0, word.find('=')) + "'");
    throw flagError(command, "unexpected argument '" + word + "'");
  }
}

// CLI11's words for a flag given without its value ("--seed: 1 required N
// missing") in Strata's: "--seed needs a value".
std::string inStrataWords(const CLI::ParseError& error) {
  std::string message = error.what();
  if (dynamic_cast<const CLI::ArgumentMismatch*>(&error) != nullptr &&
      message.find(" missing") != std::string::npos) {
    size_t colon = message.find(':');
    if (colon != std::string::npos) return message.substr(0, colon) + " needs a value";
  }
  return message;
}

int runChosen(const CLI::App& program, const std::vector<Subcommand>& subcommands,
              std::ostream& err) {
  for (const Subcommand& subcommand : subcommands) {
    if (subcommand.command->parsed()) return subcommand.run();
  }
  err << program.help();
  return 2;
}

}  // namespace

void parseCommandLine(CLI::App& program, std::vector<std::string> args) {
  for (CLI::App* command : program.get_subcommands([](CLI::App*) { return true; }))
    command->allow_extras();
  program.allow_extras();
  // Only one command runs: a second command name is an unexpected argument.
  program.require_subcommand(0, 1);
  std::reverse(args.begin(), args.end());  // CLI11 takes the words from the back
  try {
    program.parse(args);
  } catch (const CLI::Success&) {
    throw;
  } catch (const CLI::ParseError& error) {
    // What CLI11 itself finds: a value missing, flags that exclude each other.
    throw flagError(chosenCommand(program), inStrataWords(error));
  }
  rejectLeftovers(program);
}

int runCommandLine(CLI::App& program, const std::vector<Subcommand>& subcommands,
                   const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  try {
    parseCommandLine(program, args);
    return runChosen(program, subcommands, err);
  } catch (const CLI::CallForHelp&) {
    out << program.help();  // the help of the command chosen
    return 0;
  } catch (const CLI::CallForVersion& version) {
    out << version.what() << "\n";
    return 0;
  } catch (const FlagError& error) {
    err << error.what() << "\n";
    if (program.get_subcommands().empty()) err << "\n" << program.help();
    return 2;
  } catch (const ConfigError& error) {
    err << commandName(chosenCommand(program)) << ": " << error.what() << "\n";
    return 2;
  } catch (const std::exception& error) {
    err << commandName(chosenCommand(program)) << ": " << error.what() << "\n";
    return 1;
  }
}

}  // namespace strata
