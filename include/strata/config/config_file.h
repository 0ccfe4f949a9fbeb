// Reading and writing TrainConfig as a TOML file with the tables [model],
// [parallel], [train], [data] and [checkpoint] (keys: see configOptions()).
//
// The file is TOML 1.0 (strata/util/toml.h): `[model]\nlayers = 8`,
// `model.layers = 8` and `model = { layers = 8 }` alike; data.files is an
// array of strings. Nothing blocks. Reading throws ConfigError "FILE:LINE: ..."
// naming the key for a key the table does not have, a key outside any table
// or a value of the wrong type, and "FILE:LINE:COLUMN: ..." for a TOML syntax
// error (an integer out of range included).
#pragma once

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "strata/config/config.h"

namespace strata::train {

// Sets every option the text names; options it does not name keep their
// value in `config`.
void applyConfigToml(const std::string& text, const std::string& fileName, TrainConfig& config);
// Defaults overridden by the file at `path`; throws ConfigError when it
// cannot be read.
TrainConfig readConfigFile(const std::string& path);
// "table.key" of every option the file at `path` sets; throws as
// readConfigFile.
std::set<std::string> optionsSetInConfigFile(const std::string& path);
// Every option, table by table; applyConfigToml() of it gives back `config`.
std::string configToToml(const TrainConfig& config);
// Every option as ("table.key", TOML literal of its value), in configOptions() order.
std::vector<std::pair<std::string, std::string>> configEntries(const TrainConfig& config);

}  // namespace strata::train
