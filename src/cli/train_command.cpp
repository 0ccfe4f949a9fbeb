#include "train_command.h"

#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>

#include "strata/config/init_from_model.h"
#include "strata/config/train_flags.h"
#include "strata/error.h"
#include "strata/runtime/world.h"
#include "strata/train/train_loop.h"
#include "strata/train/trainer.h"
#include "strata/util/cli_flags.h"

namespace strata {
namespace {

class TrainCommand {
 public:
  explicit TrainCommand(CLI::App& command) : flags_(command) {
    // A property of the run, not of the model, so it is not in TrainConfig:
    // like `strata launch --timeout`, it bounds every blocking call.
    timeoutFlag_ = addRealFlag(command, "--timeout", &timeoutSeconds_,
                               "seconds any blocking call may wait; unset: STRATA_TIMEOUT if set");
  }

  int run() const {
    std::string where = "strata train";
    try {
      Timeouts timeouts = this->timeouts();
      train::TrainConfig config = flags_.config();
      train::takeModelFromInitFrom(config, flags_.optionsSet());
      ProcessEnv env = ProcessEnv::fromEnvironment();
      where += " (rank " + std::to_string(env.rank) + ")";
      auto world = World::init(env, timeouts);
      train::Trainer trainer(config, world);
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

 private:
  Timeouts timeouts() const {
    // Read even when --timeout overrides it: a typo in STRATA_TIMEOUT is
    // reported where it was made, not ignored.
    Timeouts fromEnvironment = Timeouts::fromEnvironment();
    return timeoutFlag_->count() ? Timeouts::fromSeconds(timeoutSeconds_) : fromEnvironment;
  }

  train::TrainFlags flags_;
  double timeoutSeconds_ = Timeouts::kDefaultSeconds;
  const CLI::Option* timeoutFlag_;
};

}  // namespace

Subcommand addTrainCommand(CLI::App& strata) {
  CLI::App* command = strata.add_subcommand(
      "train",
      "train a GPT or Llama-family model over any mix of pipeline, tensor, data, context and "
      "expert parallel");
  auto train = std::make_shared<TrainCommand>(*command);
  return {command, [train] { return train->run(); }};
}

}  // namespace strata
