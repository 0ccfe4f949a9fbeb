// Checks a TrainConfig against itself and the world size, before any
// communication: every rank runs the same check on the same config and
// raises the same error, so no rank waits on a peer that already gave up.
//
// Throws ConfigError listing every problem found, each naming its values,
// for example "world size 6 != pp 2 x dp 2 x tp 2" or "heads 6 is not
// divisible by tp 4". Nothing blocks.
#pragma once

#include <string>
#include <vector>

#include "strata/config/config.h"

namespace strata::train {

// The problems, one line each; empty when the config is valid.
std::vector<std::string> configProblems(const TrainConfig& config, int worldSize);
void validateConfig(const TrainConfig& config, int worldSize);

}  // namespace strata::train
