#include "launch_command.h"

#include <CLI/CLI.hpp>
#include <memory>

#include "strata/launch/launch_flags.h"

namespace strata {

Subcommand addLaunchCommand(CLI::App& strata) {
  CLI::App* command =
      strata.add_subcommand("launch", "start and supervise the workers of a job on this node");
  auto flags = std::make_shared<LaunchFlags>(*command);
  return {command, [flags] { return runLauncher(flags->options()); }};
}

}  // namespace strata
