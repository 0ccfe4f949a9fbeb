// A parser for the subset of TOML that Strata's configuration files use.
//
// Supported: `[table]` headers with bare names (A-Z a-z 0-9 _ -), `key = value`
// lines with bare keys, `#` comments (whole-line or trailing), blank lines,
// and four value types: basic strings "..." (escapes \" \\ \n \t \r),
// literal strings '...', integers (sign and `_` separators allowed), floats
// (`3e-4`, `0.5`, `-1.5E3`) and booleans. Arrays, inline tables, dotted keys
// and dates are not supported and are reported as errors.
//
// Nothing blocks. parseToml throws ConfigError "FILE:LINE: what is wrong"
// for any syntax error, a duplicate key or a repeated table.
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace strata::train {

using TomlValue = std::variant<std::string, int64_t, double, bool>;

struct TomlEntry {
  std::string table;  // "" for keys before the first header
  std::string key;
  TomlValue value;
  int line = 0;  // 1-based
};

std::vector<TomlEntry> parseToml(const std::string& text, const std::string& fileName);

// "string", "integer", "float" or "boolean".
const char* tomlTypeName(const TomlValue& value);
// Writes a value back in TOML syntax (strings quoted and escaped).
std::string tomlLiteral(const TomlValue& value);

}  // namespace strata::train
