#include "strata/config/init_from_model.h"

#include <filesystem>

#include "formats/atomic_file.h"
#include "strata/config/config_file.h"
#include "strata/error.h"
#include "strata/models/hugging_face.h"
#include "strata/util/toml.h"

namespace strata::train {
namespace {

// The value of option `name` in `config`, as its TOML literal.
std::string valueOf(const TrainConfig& config, const std::string& name) {
  for (const auto& [option, literal] : configEntries(config))
    if (option == name) return literal;
  throw ConfigError("no option '" + name + "'");
}

}  // namespace

std::string huggingFaceConfigOf(const std::string& initFrom) {
  namespace fs = std::filesystem;
  fs::path weights(initFrom);
  fs::path folder = fs::is_directory(weights) ? weights : weights.parent_path();
  return (folder / "config.json").string();
}

std::string initFromModelToml(const std::string& initFrom) {
  if (initFrom.empty()) return "";
  std::string source = huggingFaceConfigOf(initFrom);
  if (!std::filesystem::exists(source)) return "";
  return models::modelTomlOfHuggingFaceConfig(formats::readWholeFile(source), source);
}

void takeModelFromInitFrom(TrainConfig& config, const std::set<std::string>& set) {
  std::string model = initFromModelToml(config.checkpoint.initFrom);
  if (model.empty()) return;
  std::string source = huggingFaceConfigOf(config.checkpoint.initFrom);
  TrainConfig described = config;
  applyConfigToml(model, source, described);
  for (const util::TomlEntry& entry : util::readToml(model, source)) {
    std::string name = entry.name();
    if (!set.count(name)) continue;
    std::string mine = valueOf(config, name), theirs = valueOf(described, name);
    if (mine != theirs)
      throw ConfigError(name + " is " + mine + " here but " + theirs + " in '" + source +
                        "', the model of the --init-from weights: leave " + name +
                        " out to take it from there");
  }
  config.model = described.model;
}

}  // namespace strata::train
