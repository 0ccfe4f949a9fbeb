// A worker of the multi-node rehearsal: the Trainer on the tiny test GPT, in
// the layout its arguments give, started by `strata launch` on one node.
//
//   node_trainer record DIR LAYERS PP DP TP SCHEDULE SEED
//     trains the compared steps and writes its record and shards into DIR
//     (reference_comparison.h), for the parent to compare with the reference;
//   node_trainer forever LAYERS PP DP TP SCHEDULE SEED
//     trains until stopped, printing "step N" after each step.
#include <cstdlib>
#include <iostream>
#include <string>

#include "reference_comparison.h"
#include "strata/runtime/world.h"
#include "trainer_test_util.h"

namespace {

using strata::train::TrainConfig;

TrainConfig configFrom(char** layout) {
  TrainConfig config = strata::train::testing::tinyConfig();
  config.model.layers = std::atoi(layout[0]);
  config.parallel.pp = std::atoi(layout[1]);
  config.parallel.dp = std::atoi(layout[2]);
  config.parallel.tp = std::atoi(layout[3]);
  config.parallel.schedule = layout[4];
  config.train.seed = std::atoll(layout[5]);
  return config;
}

}  // namespace

int run(int argc, char** argv) {
  std::string mode = argc > 1 ? argv[1] : "";
  if (!((mode == "record" && argc == 9) || (mode == "forever" && argc == 8))) {
    std::cerr << "usage: node_trainer record DIR LAYERS PP DP TP SCHEDULE SEED\n"
                 "       node_trainer forever LAYERS PP DP TP SCHEDULE SEED\n";
    return 2;
  }
  TrainConfig config = configFrom(argv + (mode == "record" ? 3 : 2));
  if (mode == "forever") config.train.steps = 1000000;
  strata::train::Trainer trainer(config, strata::World::init());
  if (mode == "record") {
    strata::train::testing::recordRun(trainer, argv[2], trainer.world().rank());
    return 0;
  }
  for (int step = 1;; ++step) {
    trainer.step();
    std::cout << "step " << step << std::endl;
  }
}

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "node_trainer: " << e.what() << std::endl;
    return 1;
  }
}
