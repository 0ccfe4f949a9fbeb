#include "strata/util/toml.h"

#include <toml++/toml.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>
#include <sstream>
#include <tuple>

#include "strata/error.h"

namespace strata::util {
namespace {

// An entry with its position, so that entries can be put back in document
// order: toml++ keeps each table's keys sorted by name.
struct PlacedEntry {
  uint32_t line;
  uint32_t column;
  TomlEntry entry;
};

std::string whereOf(const toml::node& node, const std::string& source) {
  return source + ":" + std::to_string(node.source().begin.line);
}

std::optional<TomlScalar> scalarOf(const toml::node& node) {
  if (auto* text = node.as_string()) return TomlScalar(text->get());
  if (auto* integer = node.as_integer()) return TomlScalar(integer->get());
  if (auto* real = node.as_floating_point()) return TomlScalar(real->get());
  if (auto* boolean = node.as_boolean()) return TomlScalar(boolean->get());
  return std::nullopt;
}

[[noreturn]] void unsupported(const std::string& where, const std::string& name,
                              const std::string& what) {
  throw ConfigError(where + ": '" + name + "' holds " + what +
                    "; Strata's files take strings, numbers, booleans and arrays of them");
}

TomlValue valueOf(const toml::node& node, const std::string& where, const std::string& name) {
  if (std::optional<TomlScalar> scalar = scalarOf(node))
    return std::visit([](auto&& v) -> TomlValue { return std::move(v); }, std::move(*scalar));
  const toml::array* array = node.as_array();
  if (!array) unsupported(where, name, "a date or time");
  TomlArray items;
  for (const toml::node& item : *array) {
    std::optional<TomlScalar> scalar = scalarOf(item);
    if (!scalar) unsupported(where, name, "an array of arrays, tables or dates");
    items.push_back(std::move(*scalar));
  }
  return items;
}

void flatten(const toml::table& table, const std::string& path, const std::string& source,
             std::vector<PlacedEntry>& out) {
  for (const auto& [key, node] : table) {
    std::string name = path.empty() ? std::string(key.str()) : path + "." + std::string(key.str());
    if (const toml::table* inner = node.as_table()) {
      flatten(*inner, name, source, out);
      continue;
    }
    std::string where = whereOf(node, source);
    const toml::source_position& begin = node.source().begin;
    out.push_back({begin.line,
                   begin.column,
                   {path, std::string(key.str()), valueOf(node, where, name), where}});
  }
}

std::string literal(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char text[32];
  // Without a format, to_chars writes the shortest text that reads back exactly.
  std::string digits(text, std::to_chars(text, text + sizeof(text), value).ptr);
  // TOML reads "3" as an integer; a float needs its '.' or exponent.
  if (digits.find_first_of(".e") == std::string::npos) digits += ".0";
  return digits;
}

std::string literal(const std::string& value) {
  // Only basic strings ("..."): toml++ escapes quotes, backslashes and control
  // characters and leaves UTF-8 text readable.
  std::ostringstream out;
  out << toml::toml_formatter{toml::value<std::string>(value),
                              toml::format_flags::allow_unicode_strings};
  return out.str();
}

std::string literal(int64_t value) { return std::to_string(value); }
std::string literal(bool value) { return value ? "true" : "false"; }

std::string literal(const TomlArray& array) {
  std::string text = "[";
  for (size_t i = 0; i < array.size(); ++i)
    text += (i == 0 ? "" : ", ") + std::visit([](const auto& v) { return literal(v); }, array[i]);
  return text + "]";
}

}  // namespace

std::string TomlEntry::name() const { return table.empty() ? key : table + "." + key; }

std::vector<TomlEntry> readToml(const std::string& text, const std::string& source) {
  toml::table document;
  try {
    document = toml::parse(text, source);
  } catch (const toml::parse_error& error) {
    const toml::source_position& at = error.source().begin;
    throw ConfigError(source + ":" + std::to_string(at.line) + ":" + std::to_string(at.column) +
                      ": " + std::string(error.description()));
  }
  std::vector<PlacedEntry> placed;
  flatten(document, "", source, placed);
  std::stable_sort(placed.begin(), placed.end(), [](const PlacedEntry& a, const PlacedEntry& b) {
    return std::tie(a.line, a.column) < std::tie(b.line, b.column);
  });
  std::vector<TomlEntry> entries;
  for (PlacedEntry& p : placed) entries.push_back(std::move(p.entry));
  return entries;
}

const char* tomlTypeName(const TomlValue& value) {
  static const char* const kNames[] = {"string", "integer", "float", "boolean", "array"};
  return kNames[value.index()];
}

std::string tomlLiteral(const TomlValue& value) {
  return std::visit([](const auto& v) { return literal(v); }, value);
}

std::string describeToml(const TomlValue& value) {
  return std::string(tomlTypeName(value)) + " " + tomlLiteral(value);
}

std::string tomlTable(const std::string& table, const TomlPairs& pairs) {
  std::string text = table.empty() ? "" : "[" + table + "]\n";
  for (const auto& [key, value] : pairs) text += key + " = " + tomlLiteral(value) + "\n";
  return text;
}

}  // namespace strata::util
