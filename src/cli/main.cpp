// The `strata` command: one binary, one subcommand per job.
#include <torch/version.h>

#include <CLI/CLI.hpp>
#include <iostream>
#include <string>
#include <vector>

#include "checkpoint_command.h"
#include "data_command.h"
#include "debug_command.h"
#include "eval_command.h"
#include "export_command.h"
#include "generate_command.h"
#include "k8s_command.h"
#include "launch_command.h"
#include "plan_command.h"
#include "simulate_command.h"
#include "strata/config/config_file.h"
#include "strata/config/init_from_model.h"
#include "strata/util/openblas_core.h"
#include "strata/version.h"
#include "train_command.h"

namespace {

// The LibTorch named is the one whose headers this binary was compiled
// against, what a bug report needs when LibTorch versions behave differently.
std::string versionText() {
  return "strata " + std::string(strata::kVersion) + "\nbuilt with LibTorch " + TORCH_VERSION;
}

// `strata version`, the same as `strata --version`.
strata::Subcommand addVersionCommand(CLI::App& strata) {
  CLI::App* command =
      strata.add_subcommand("version", "print Strata's version and the LibTorch it was built with");
  return {command, [] {
            std::cout << versionText() << "\n";
            return 0;
          }};
}

}  // namespace

int main(int argc, char** argv) {
  // Before anything multiplies: OpenBLAS chose its kernels when it loaded.
  strata::reexecWithBetterOpenBlasCore(argv);
  CLI::App strata(
      "Strata: train large models over pipeline, tensor, data, context and expert parallelism.",
      "strata");
  strata.set_version_flag("--version", versionText());
  strata.footer("Run 'strata COMMAND --help' for the flags of a command.");
  std::vector<strata::Subcommand> subcommands = {
      strata::addTrainCommand(strata),
      strata::addLaunchCommand(strata),
      strata::addGenerateCommand(strata),
      strata::addEvalCommand(strata),
      strata::addPlanCommand(strata, std::cout, std::cerr,
                             [](const std::string& configPath) {
                               return strata::train::initFromModelToml(
                                   strata::train::readConfigFile(configPath).checkpoint.initFrom);
                             }),
      strata::addSimulateCommand(strata),
      strata::addK8sCommand(strata, std::cout, std::cerr),
      strata::addExportCommand(strata, std::cout),
      addVersionCommand(strata)};
  for (const strata::Subcommand& data : strata::addDataCommands(strata, std::cout))
    subcommands.push_back(data);
  for (const strata::Subcommand& tool : strata::addCheckpointCommands(strata, std::cout))
    subcommands.push_back(tool);
  for (const strata::Subcommand& tool : strata::addDebugCommands(strata, std::cout))
    subcommands.push_back(tool);
  return strata::runCommandLine(
      strata, subcommands, std::vector<std::string>(argv + 1, argv + argc), std::cout, std::cerr);
}
