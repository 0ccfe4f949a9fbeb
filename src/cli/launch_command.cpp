#include "launch_command.h"

#include <iostream>

#include "strata/launch/launcher.h"
#include "strata/util/flags.h"

namespace strata {

int launchCommand(const std::vector<std::string>& args) {
  LaunchOptions options;
  bool help = false;
  try {
    options = parseLaunchArgs(args, &help);
  } catch (const FlagError& e) {
    std::cerr << e.what() << std::endl;
    return 2;
  } catch (const ConfigError& e) {
    // A bad environment variable: exit 2 like a bad flag (FlagError names the command itself).
    std::cerr << "strata launch: " << e.what() << std::endl;
    return 2;
  }
  if (help) {
    std::cout << launchHelp();
    return 0;
  }
  return runLauncher(options);
}

}  // namespace strata
