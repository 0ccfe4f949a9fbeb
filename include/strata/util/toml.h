// TOML 1.0 for every file Strata reads or writes as configuration: training
// configs, cluster descriptions, measured profiles, checkpoint metadata and
// the peak-FLOP/s cache. Parsing is toml++'s, behind this small interface so
// that only toml.cpp compiles the (heavy) toml++ header and the LibTorch-free
// layers can use it too.
//
// readToml() flattens a document into its values, one TomlEntry per key, in
// the order they appear in the text. Tables, dotted keys and inline tables
// all flatten alike: `[model]\nlayers = 8`, `model.layers = 8` and
// `model = { layers = 8 }` give the same entry. A value is a string, an
// integer, a float (nan and inf included), a boolean or an array of those;
// no Strata file has a use for dates, nested arrays or arrays of tables, so
// those are errors naming the key.
//
// Nothing blocks. readToml() throws ConfigError "<source>:<line>:<column>:
// <what toml++ found wrong>" for any syntax error, duplicate key or table;
// callers that speak for another error type (PlanError, CheckpointError)
// rethrow it as theirs.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace strata::util {

using TomlScalar = std::variant<std::string, int64_t, double, bool>;
using TomlArray = std::vector<TomlScalar>;
using TomlValue = std::variant<std::string, int64_t, double, bool, TomlArray>;

struct TomlEntry {
  std::string table;  // dotted path of the enclosing tables; "" at the top level
  std::string key;
  TomlValue value;
  std::string where;  // "<source>:<line>" of the value, for messages

  // "table.key", or "key" at the top level.
  std::string name() const;
};

std::vector<TomlEntry> readToml(const std::string& text, const std::string& source);

// "string", "integer", "float", "boolean" or "array".
const char* tomlTypeName(const TomlValue& value);
// The value in TOML syntax: strings quoted with every needed escape, floats
// in the fewest digits that read back as the same double (`nan`, `inf`).
std::string tomlLiteral(const TomlValue& value);
// The type and the literal, for messages: `string "fast"`, `float 2.5`.
std::string describeToml(const TomlValue& value);

// Pairs in the order they are to be written; keys must be bare (A-Z a-z 0-9 _ -).
using TomlPairs = std::vector<std::pair<std::string, TomlValue>>;
// "[table]" and one `key = value` line per pair; with an empty table name,
// only the lines (top-level keys, which must come before any table).
std::string tomlTable(const std::string& table, const TomlPairs& pairs);

}  // namespace strata::util
