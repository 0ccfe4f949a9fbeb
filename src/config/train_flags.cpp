#include "strata/config/train_flags.h"

#include <CLI/CLI.hpp>

#include "strata/config/config_file.h"
#include "strata/error.h"
#include "strata/util/cli_flags.h"

namespace strata::train {
namespace {

using IntegerField = int64_t& (*)(TrainConfig&);
using RealField = double& (*)(TrainConfig&);
using BoolField = bool& (*)(TrainConfig&);
using TextField = std::string& (*)(TrainConfig&);
using ListField = std::vector<std::string>& (*)(TrainConfig&);
using IntegerListField = std::vector<int64_t>& (*)(TrainConfig&);

std::string joinList(const std::vector<std::string>& items) {
  std::string text;
  for (const std::string& item : items) text += (text.empty() ? "" : ",") + item;
  return text;
}

std::string joinIntegers(const std::vector<int64_t>& items) {
  std::string text;
  for (int64_t item : items) text += (text.empty() ? "" : ",") + std::to_string(item);
  return text;
}

// "3,3" -> {3, 3}; an item that is not a whole integer names the flag.
std::vector<int64_t> splitIntegers(const std::string& text, const std::string& flag) {
  std::vector<int64_t> integers;
  for (const std::string& item : splitList(text)) {
    std::size_t used = 0;
    try {
      integers.push_back(std::stoll(item, &used));
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != item.size()) {
      throw FlagError("--" + flag + " expects comma-separated integers, like 3,3, got '" + text +
                      "'");
    }
  }
  return integers;
}

std::string helpOf(const ConfigOption& option) {
  return "[" + std::string(option.table) + "] " + option.key + ": " + option.help;
}

// One flag that writes into the option's field of `values`.
const CLI::Option* addOptionFlag(CLI::App& command, const ConfigOption& option,
                                 TrainConfig& values) {
  std::string help = helpOf(option);
  std::string name = option.flag;
  if (auto* integer = std::get_if<IntegerField>(&option.field))
    return addIntFlag(command, "--" + name, &(*integer)(values), help);
  if (auto* real = std::get_if<RealField>(&option.field))
    return addRealFlag(command, "--" + name, &(*real)(values), help);
  if (auto* boolean = std::get_if<BoolField>(&option.field))
    return addSwitch(command, name, &(*boolean)(values), help);
  return addTextFlag(command, "--" + name, &std::get<TextField>(option.field)(values), help);
}

}  // namespace

TrainFlags::TrainFlags(CLI::App& command) {
  command.footer(
      "Options come from TrainConfig's defaults, then --config FILE (TOML tables\n"
      "[model] [parallel] [train] [data] [checkpoint]), then the flags given here.");
  addTextFlag(command, "--config", &configPath_, "TOML file with options (flags override it)");
  for (const ConfigOption& option : configOptions()) {
    const CLI::Option* flag = nullptr;
    if (auto* list = std::get_if<ListField>(&option.field)) {
      std::string& text = listTexts_[&option] = joinList((*list)(flagValues_));
      flag = addTextFlag(command, "--" + std::string(option.flag), &text,
                         helpOf(option) + " (comma-separated)");
    } else if (auto* integers = std::get_if<IntegerListField>(&option.field)) {
      std::string& text = listTexts_[&option] = joinIntegers((*integers)(flagValues_));
      flag = addTextFlag(command, "--" + std::string(option.flag), &text,
                         helpOf(option) + " (comma-separated)");
    } else {
      flag = addOptionFlag(command, option, flagValues_);
    }
    flags_.emplace_back(&option, flag);
  }
}

std::set<std::string> TrainFlags::optionsSet() const {
  std::set<std::string> names =
      configPath_.empty() ? std::set<std::string>{} : optionsSetInConfigFile(configPath_);
  for (const auto& [option, flag] : flags_)
    if (flag->count() > 0) names.insert(std::string(option->table) + "." + option->key);
  return names;
}

bool TrainFlags::given(const std::string& flag) const {
  for (const auto& [option, cliFlag] : flags_)
    if (option->flag == flag) return cliFlag->count() > 0;
  return false;
}

TrainConfig TrainFlags::config() const {
  TrainConfig config = configPath_.empty() ? TrainConfig{} : readConfigFile(configPath_);
  TrainConfig values = flagValues_;  // the field accessors take a mutable config
  for (const auto& [option, flag] : flags_) {
    if (flag->count() == 0) continue;
    if (auto* list = std::get_if<ListField>(&option->field)) {
      (*list)(config) = splitList(listTexts_.at(option));
      continue;
    }
    if (auto* integers = std::get_if<IntegerListField>(&option->field)) {
      (*integers)(config) = splitIntegers(listTexts_.at(option), option->flag);
      continue;
    }
    std::visit([&](auto field) { field(config) = field(values); }, option->field);
  }
  if (given("architecture") && !given("tied-embeddings"))
    config.model.tiedEmbeddings = defaultTiedEmbeddings(config.model.architecture);
  return config;
}

}  // namespace strata::train
