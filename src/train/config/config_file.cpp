#include "strata/train/config/config_file.h"

#include <fstream>
#include <sstream>

#include "strata/error.h"
#include "strata/train/config/toml.h"

namespace strata::train {
namespace {

const ConfigOption* findOption(const std::string& table, const std::string& key) {
  for (const ConfigOption& option : configOptions())
    if (table == option.table && key == option.key) return &option;
  return nullptr;
}

std::string keysOf(const std::string& table) {
  std::string keys;
  for (const ConfigOption& option : configOptions())
    if (table == option.table) keys += (keys.empty() ? "" : ", ") + std::string(option.key);
  return keys;
}

[[noreturn]] void failAt(const std::string& fileName, const TomlEntry& entry,
                         const std::string& message) {
  throw ConfigError(fileName + ":" + std::to_string(entry.line) + ": " + message);
}

// Stores entry's value into the field, accepting an integer where a float is
// expected (TOML readers commonly do: `lr = 1` means 1.0).
void assign(const ConfigOption& option, const TomlEntry& entry, const std::string& fileName,
            TrainConfig& config) {
  const TomlValue& value = entry.value;
  std::string name = entry.table + "." + entry.key;
  auto wrongType = [&](const char* expected) {
    failAt(fileName, entry,
           "'" + name + "' expects " + expected + ", got " + tomlTypeName(value) + " " +
               tomlLiteral(value));
  };
  if (auto* integer = std::get_if<int64_t& (*)(TrainConfig&)>(&option.field)) {
    if (!std::holds_alternative<int64_t>(value)) wrongType("an integer");
    (*integer)(config) = std::get<int64_t>(value);
  } else if (auto* real = std::get_if<double& (*)(TrainConfig&)>(&option.field)) {
    if (auto* i = std::get_if<int64_t>(&value))
      (*real)(config) = static_cast<double>(*i);
    else if (auto* d = std::get_if<double>(&value))
      (*real)(config) = *d;
    else
      wrongType("a number");
  } else if (auto* boolean = std::get_if<bool& (*)(TrainConfig&)>(&option.field)) {
    if (!std::holds_alternative<bool>(value)) wrongType("true or false");
    (*boolean)(config) = std::get<bool>(value);
  } else {
    if (!std::holds_alternative<std::string>(value)) wrongType("a string");
    std::get<std::string& (*)(TrainConfig&)>(option.field)(config) = std::get<std::string>(value);
  }
}

TomlValue valueOf(const ConfigOption& option, const TrainConfig& config) {
  // The accessors take a mutable config; reading through a copy keeps
  // `config` const.
  TrainConfig copy = config;
  return std::visit([&](auto field) -> TomlValue { return field(copy); }, option.field);
}

}  // namespace

void applyConfigToml(const std::string& text, const std::string& fileName, TrainConfig& config) {
  for (const TomlEntry& entry : parseToml(text, fileName)) {
    if (entry.table.empty())
      failAt(fileName, entry,
             "key '" + entry.key +
                 "' is outside any table; use [model], [parallel], [train], [data] or "
                 "[checkpoint]");
    const ConfigOption* option = findOption(entry.table, entry.key);
    if (!option) {
      std::string known = keysOf(entry.table);
      failAt(fileName, entry,
             "unknown key '" + entry.key + "' in [" + entry.table + "]" +
                 (known.empty() ? " (unknown table)" : " (known keys: " + known + ")"));
    }
    assign(*option, entry, fileName, config);
  }
}

TrainConfig readConfigFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError("config file '" + path + "' cannot be opened");
  std::ostringstream text;
  text << in.rdbuf();
  TrainConfig config;
  applyConfigToml(text.str(), path, config);
  return config;
}

std::string configToToml(const TrainConfig& config) {
  std::ostringstream out;
  std::string table;
  for (const ConfigOption& option : configOptions()) {
    if (table != option.table) {
      out << (table.empty() ? "" : "\n") << "[" << option.table << "]\n";
      table = option.table;
    }
    out << option.key << " = " << tomlLiteral(valueOf(option, config)) << "\n";
  }
  return out.str();
}

std::vector<std::pair<std::string, std::string>> configEntries(const TrainConfig& config) {
  std::vector<std::pair<std::string, std::string>> entries;
  for (const ConfigOption& option : configOptions()) {
    entries.emplace_back(std::string(option.table) + "." + option.key,
                         tomlLiteral(valueOf(option, config)));
  }
  return entries;
}

}  // namespace strata::train
