// The command line of `strata train`: `--config FILE` plus one flag per
// option of configOptions() (`--pp 2 --tp 2 --lr 3e-4 ...`). Defaults come
// from TrainConfig, then the file, then the flags that were given, so a flag
// always wins over the file.
//
// Nothing blocks. parseTrainArgs throws ConfigError naming the flag and value
// for an unknown flag or a malformed value, and whatever readConfigFile
// throws. It does not check values against each other or the world size:
// that is validateConfig() (validate_config.h).
#pragma once

#include <string>
#include <vector>

#include "strata/train/config/config.h"

namespace strata::train {

struct TrainArgs {
  TrainConfig config;
  std::string configPath;  // "" when --config was not given
  bool helpRequested = false;
};

TrainArgs parseTrainArgs(const std::vector<std::string>& args);
// `strata train --help`: every flag with its TOML key and default.
std::string trainHelp();

}  // namespace strata::train
