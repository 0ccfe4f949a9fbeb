#include "train_command.h"

#include <iostream>

#include "strata/error.h"
#include "strata/runtime/world.h"
#include "strata/train/config/train_flags.h"
#include "strata/train/loop/train_loop.h"
#include "strata/train/loop/trainer.h"
#include "strata/util/parse_number.h"

namespace strata {
namespace {

// `--timeout SECONDS` bounds every blocking call, like `strata launch
// --timeout`; it is a property of the run, not of the model, so it is taken
// out before the config flags are parsed.
Timeouts extractTimeout(std::vector<std::string>& args) {
  Timeouts timeouts = Timeouts::fromEnvironment();
  for (size_t i = 0; i < args.size(); ++i) {
    std::string value;
    if (args[i] == "--timeout" && i + 1 < args.size()) {
      value = args[i + 1];
      args.erase(args.begin() + static_cast<long>(i), args.begin() + static_cast<long>(i) + 2);
    } else if (args[i].rfind("--timeout=", 0) == 0) {
      value = args[i].substr(10);
      args.erase(args.begin() + static_cast<long>(i));
    } else {
      continue;
    }
    std::optional<double> seconds = parseReal(value);
    if (!seconds) throw ConfigError("--timeout expects a number of seconds, got '" + value + "'");
    return Timeouts::fromSeconds(*seconds);
  }
  return timeouts;
}

}  // namespace

int trainCommand(const std::vector<std::string>& rawArgs) {
  std::string where = "strata train";
  try {
    std::vector<std::string> args = rawArgs;
    Timeouts timeouts = extractTimeout(args);
    train::TrainArgs parsed = train::parseTrainArgs(args);
    if (parsed.helpRequested) {
      std::cout << train::trainHelp()
                << "  --timeout X               seconds any blocking call may wait "
                   "(default: STRATA_TIMEOUT or 300)\n";
      return 0;
    }
    ProcessEnv env = ProcessEnv::fromEnvironment();
    where += " (rank " + std::to_string(env.rank) + ")";
    auto world = World::init(env, timeouts);
    train::Trainer trainer(parsed.config, world);
    train::TrainSummary summary = train::runTraining(trainer, std::cerr);
    if (world->rank() == 0) std::cout << train::summaryJson(summary, "train") << std::endl;
    return 0;
  } catch (const ConfigError& e) {
    std::cerr << where << ": " << e.what() << std::endl;
    return 2;
  } catch (const std::exception& e) {
    std::cerr << where << ": " << e.what() << std::endl;
    return 1;
  }
}

}  // namespace strata
