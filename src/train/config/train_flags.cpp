#include "strata/train/config/train_flags.h"

#include <deque>
#include <sstream>

#include "strata/error.h"
#include "strata/train/config/config_file.h"
#include "strata/util/flags.h"

namespace strata::train {
namespace {

constexpr const char* kSummary =
    "Trains a GPT-style model with pipeline, tensor and data parallelism.\n"
    "Options come from TrainConfig's defaults, then --config FILE (TOML tables\n"
    "[model] [parallel] [train] [data] [checkpoint]), then the flags given here.";

using StringField = std::string& (*)(TrainConfig&);
using ListField = std::vector<std::string>& (*)(TrainConfig&);

// A list option's flag takes its items comma-separated, empty items dropped.
std::string joinList(const std::vector<std::string>& items) {
  std::string text;
  for (const std::string& item : items) text += (text.empty() ? "" : ",") + item;
  return text;
}

std::vector<std::string> splitList(const std::string& text) {
  std::vector<std::string> items;
  std::istringstream list(text);
  std::string item;
  while (std::getline(list, item, ','))
    if (!item.empty()) items.push_back(item);
  return items;
}

// FlagSet writes into these; deques keep the addresses stable while growing.
struct FlagValues {
  std::string configPath;
  std::deque<long long> integers;
  std::deque<double> reals;
  std::deque<bool> booleans;
  std::deque<std::string> strings;
};

// Binds one flag per option, each starting at TrainConfig's default, so
// --help shows the defaults.
void bindFlags(FlagSet& flags, FlagValues& values) {
  flags.addString("config", &values.configPath, "TOML file with options (flags override it)");
  TrainConfig defaults;
  for (const ConfigOption& option : configOptions()) {
    std::string help = "[" + std::string(option.table) + "] " + option.key + ": " + option.help;
    if (auto* integer = std::get_if<int64_t& (*)(TrainConfig&)>(&option.field)) {
      flags.addInt(option.flag, &values.integers.emplace_back((*integer)(defaults)), help);
    } else if (auto* real = std::get_if<double& (*)(TrainConfig&)>(&option.field)) {
      flags.addDouble(option.flag, &values.reals.emplace_back((*real)(defaults)), help);
    } else if (auto* boolean = std::get_if<bool& (*)(TrainConfig&)>(&option.field)) {
      flags.addBool(option.flag, &values.booleans.emplace_back((*boolean)(defaults)), help);
    } else if (auto* text = std::get_if<StringField>(&option.field)) {
      flags.addString(option.flag, &values.strings.emplace_back((*text)(defaults)), help);
    } else {
      std::string items = joinList(std::get<ListField>(option.field)(defaults));
      flags.addString(option.flag, &values.strings.emplace_back(items),
                      help + " (comma-separated)");
    }
  }
}

// Copies the flags that were given over `config`, in bindFlags' order.
void applyGivenFlags(const FlagSet& flags, FlagValues& values, TrainConfig& config) {
  size_t integer = 0, real = 0, boolean = 0, text = 0;
  for (const ConfigOption& option : configOptions()) {
    bool given = flags.wasSet(option.flag);
    if (auto* i = std::get_if<int64_t& (*)(TrainConfig&)>(&option.field)) {
      long long value = values.integers[integer++];
      if (given) (*i)(config) = value;
    } else if (auto* r = std::get_if<double& (*)(TrainConfig&)>(&option.field)) {
      double value = values.reals[real++];
      if (given) (*r)(config) = value;
    } else if (auto* b = std::get_if<bool& (*)(TrainConfig&)>(&option.field)) {
      bool value = values.booleans[boolean++];
      if (given) (*b)(config) = value;
    } else if (auto* s = std::get_if<StringField>(&option.field)) {
      std::string& value = values.strings[text++];
      if (given) (*s)(config) = value;
    } else {
      std::string& value = values.strings[text++];
      if (given) std::get<ListField>(option.field)(config) = splitList(value);
    }
  }
}

}  // namespace

TrainArgs parseTrainArgs(const std::vector<std::string>& args) {
  FlagSet flags("strata train", kSummary);
  FlagValues values;
  bindFlags(flags, values);
  ParsedArgs parsed;
  try {
    parsed = flags.parse(args);
  } catch (const FlagError& error) {
    throw ConfigError(error.what());
  }
  if (!parsed.positional.empty())
    throw ConfigError("strata train: unexpected argument '" + parsed.positional.front() +
                      "' (options are flags; see 'strata train --help')");
  TrainArgs result;
  result.helpRequested = parsed.helpRequested;
  result.configPath = values.configPath;
  if (!values.configPath.empty()) result.config = readConfigFile(values.configPath);
  applyGivenFlags(flags, values, result.config);
  return result;
}

std::string trainHelp() {
  FlagSet flags("strata train", kSummary);
  FlagValues values;
  bindFlags(flags, values);
  return flags.help();
}

}  // namespace strata::train
