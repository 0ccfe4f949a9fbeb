// The model of `checkpoint.init_from`: Hugging Face weights come with a
// config.json beside them (transformers' layout: FILE.safetensors, its
// .index.json, or their folder), and that file says what model they are. So
// `strata train --init-from DIR` needs no model flags: every [model],
// [model.moe] and [model.rope_scaling] setting that neither the config file
// nor a flag sets is taken
// from config.json (models/hugging_face.h reads it). One that is set and
// differs from config.json is refused, naming both values: the weights
// would not fit, or would not be the model they were trained as.
//
// Without a config.json beside the weights nothing is taken, and the model
// is the configuration's alone, as before. Reads one file; nothing blocks.
// Throws ConfigError.
#pragma once

#include <set>
#include <string>

#include "strata/config/config.h"

namespace strata::train {

// The config.json that belongs with `initFrom`'s weights (it may not exist).
std::string huggingFaceConfigOf(const std::string& initFrom);

// The model that config.json describes, as [model] TOML in Strata's keys
// (models/hugging_face.h); "" without init_from or without a config.json.
std::string initFromModelToml(const std::string& initFrom);

// `set`: "table.key" of every option the user set (TrainFlags::optionsSet).
void takeModelFromInitFrom(TrainConfig& config, const std::set<std::string>& set);

}  // namespace strata::train
