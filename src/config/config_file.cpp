#include "strata/config/config_file.h"

#include <fstream>
#include <sstream>

#include "strata/error.h"
#include "strata/util/toml.h"

namespace strata::train {
namespace {

using util::TomlEntry;
using util::TomlValue;

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

[[noreturn]] void failAt(const TomlEntry& entry, const std::string& message) {
  throw ConfigError(entry.where + ": " + message);
}

[[noreturn]] void wrongType(const TomlEntry& entry, const std::string& expected) {
  failAt(entry,
         "'" + entry.name() + "' expects " + expected + ", got " + util::describeToml(entry.value));
}

// store() puts entry's value into a field of the matching type, or names the
// key and the type it expects.
void store(int64_t& field, const TomlEntry& entry) {
  if (!std::holds_alternative<int64_t>(entry.value)) wrongType(entry, "an integer");
  field = std::get<int64_t>(entry.value);
}

// An integer is taken where a float is expected, as TOML readers commonly
// do: `lr = 1` means 1.0.
void store(double& field, const TomlEntry& entry) {
  if (auto* integer = std::get_if<int64_t>(&entry.value))
    field = static_cast<double>(*integer);
  else if (auto* real = std::get_if<double>(&entry.value))
    field = *real;
  else
    wrongType(entry, "a number");
}

void store(bool& field, const TomlEntry& entry) {
  if (!std::holds_alternative<bool>(entry.value)) wrongType(entry, "true or false");
  field = std::get<bool>(entry.value);
}

void store(std::string& field, const TomlEntry& entry) {
  if (!std::holds_alternative<std::string>(entry.value)) wrongType(entry, "a string");
  field = std::get<std::string>(entry.value);
}

// A plain string is refused rather than read as one file: a comma-separated
// list, the form these files had before TOML arrays, would otherwise become
// one file named "a.txt,b.txt".
void store(std::vector<std::string>& field, const TomlEntry& entry) {
  const char* expected = "an array of strings, like [\"a.txt\", \"b.txt\"]";
  auto* array = std::get_if<util::TomlArray>(&entry.value);
  if (!array) wrongType(entry, expected);
  std::vector<std::string> strings;
  for (const util::TomlScalar& item : *array) {
    if (!std::holds_alternative<std::string>(item)) wrongType(entry, expected);
    strings.push_back(std::get<std::string>(item));
  }
  field = std::move(strings);
}

void store(std::vector<int64_t>& field, const TomlEntry& entry) {
  const char* expected = "an array of integers, like [3, 3]";
  auto* array = std::get_if<util::TomlArray>(&entry.value);
  if (!array) wrongType(entry, expected);
  std::vector<int64_t> integers;
  for (const util::TomlScalar& item : *array) {
    if (!std::holds_alternative<int64_t>(item)) wrongType(entry, expected);
    integers.push_back(std::get<int64_t>(item));
  }
  field = std::move(integers);
}

TomlValue tomlValue(const std::vector<std::string>& strings) {
  return util::TomlArray(strings.begin(), strings.end());
}

TomlValue tomlValue(const std::vector<int64_t>& integers) {
  return util::TomlArray(integers.begin(), integers.end());
}

template <typename Field>
TomlValue tomlValue(const Field& field) {
  return field;
}

bool names(const std::vector<TomlEntry>& entries, const std::string& table,
           const std::string& key) {
  for (const TomlEntry& entry : entries)
    if (entry.table == table && entry.key == key) return true;
  return false;
}

TomlValue valueOf(const ConfigOption& option, const TrainConfig& config) {
  // The accessors take a mutable config; reading through a copy keeps
  // `config` const.
  TrainConfig copy = config;
  return std::visit([&](auto field) { return tomlValue(field(copy)); }, option.field);
}

}  // namespace

void applyConfigToml(const std::string& text, const std::string& fileName, TrainConfig& config) {
  std::vector<TomlEntry> entries = util::readToml(text, fileName);
  for (const TomlEntry& entry : entries) {
    if (entry.table.empty())
      failAt(entry, "key '" + entry.key +
                        "' is outside any table; use [model], [parallel], [train], [data] or "
                        "[checkpoint]");
    const ConfigOption* option = findOption(entry.table, entry.key);
    if (!option) {
      std::string known = keysOf(entry.table);
      failAt(entry, "unknown key '" + entry.key + "' in [" + entry.table + "]" +
                        (known.empty() ? " (unknown table)" : " (known keys: " + known + ")"));
    }
    std::visit([&](auto field) { store(field(config), entry); }, option->field);
  }
  if (names(entries, "model", "architecture") && !names(entries, "model", "tied_embeddings"))
    config.model.tiedEmbeddings = defaultTiedEmbeddings(config.model.architecture);
}

namespace {

std::string configFileText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError("config file '" + path + "' cannot be opened");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

TrainConfig readConfigFile(const std::string& path) {
  TrainConfig config;
  applyConfigToml(configFileText(path), path, config);
  return config;
}

std::set<std::string> optionsSetInConfigFile(const std::string& path) {
  std::set<std::string> names;
  for (const util::TomlEntry& entry : util::readToml(configFileText(path), path))
    names.insert(entry.name());
  return names;
}

std::string configToToml(const TrainConfig& config) {
  std::vector<std::pair<std::string, util::TomlPairs>> tables;
  for (const ConfigOption& option : configOptions()) {
    if (tables.empty() || tables.back().first != option.table) tables.push_back({option.table, {}});
    tables.back().second.emplace_back(option.key, valueOf(option, config));
  }
  std::string text;
  for (const auto& [table, pairs] : tables)
    text += (text.empty() ? "" : "\n") + util::tomlTable(table, pairs);
  return text;
}

std::vector<std::pair<std::string, std::string>> configEntries(const TrainConfig& config) {
  std::vector<std::pair<std::string, std::string>> entries;
  for (const ConfigOption& option : configOptions()) {
    entries.emplace_back(std::string(option.table) + "." + option.key,
                         util::tomlLiteral(valueOf(option, config)));
  }
  return entries;
}

}  // namespace strata::train
