// The `strata` command: one binary, one subcommand per job.
#include <torch/version.h>

#include <functional>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "generate_command.h"
#include "launch_command.h"
#include "plan_command.h"
#include "simulate_command.h"
#include "strata/version.h"
#include "train_command.h"

namespace {

// `strata version` and `strata --version`. The LibTorch named is the one whose
// headers this binary was compiled against, what a bug report needs when
// LibTorch versions behave differently.
int versionCommand(const std::vector<std::string>& args) {
  if (!args.empty()) {
    std::cerr << "strata version: unexpected '" << args[0] << "'\n";
    return 2;
  }
  std::cout << "strata " << strata::kVersion << "\nbuilt with LibTorch " << TORCH_VERSION << "\n";
  return 0;
}

struct Subcommand {
  std::function<int(const std::vector<std::string>&)> run;
  const char* summary;
};

const std::map<std::string, Subcommand>& subcommands() {
  static const std::map<std::string, Subcommand> table = {
      {"launch", {strata::launchCommand, "start and supervise the workers of a job on this node"}},
      {"simulate",
       {[](const std::vector<std::string>& a) { return strata::simulateCommand(a); },
        "validate and time a pipeline schedule; draw its timeline"}},
      {"generate", {strata::generateCommand, "sample text from a training checkpoint"}},
      {"train",
       {strata::trainCommand, "train a GPT over any mix of pipeline, tensor and data parallel"}},
      {"plan",
       {[](const std::vector<std::string>& a) { return strata::planCommand(a); },
        "choose a parallel layout for a model on a cluster and predict time to train"}},
      {"version", {versionCommand, "print Strata's version and the LibTorch it was built with"}},
  };
  return table;
}

void printUsage(std::ostream& out) {
  out << "usage: strata COMMAND [flags]   (strata COMMAND --help for its flags)\n"
         "       strata --version\n\ncommands:\n";
  for (const auto& [name, command] : subcommands()) {
    out << "  " << name << std::string(12 - name.size(), ' ') << command.summary << "\n";
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    printUsage(args.empty() ? std::cerr : std::cout);
    return args.empty() ? 2 : 0;
  }
  if (args[0] == "--version") args[0] = "version";
  auto it = subcommands().find(args[0]);
  if (it == subcommands().end()) {
    std::cerr << "strata: unknown command '" << args[0] << "'\n\n";
    printUsage(std::cerr);
    return 2;
  }
  try {
    return it->second.run(std::vector<std::string>(args.begin() + 1, args.end()));
  } catch (const std::exception& e) {
    std::cerr << "strata " << args[0] << ": " << e.what() << std::endl;
    return 1;
  }
}
