#include "yaml_text.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <regex>
#include <set>

#include "strata/util/json.h"

namespace strata {
namespace {

using nlohmann::ordered_json;

// Plain scalars that YAML 1.1 reads as booleans or null.
bool isYamlWord(const std::string& text) {
  static const std::set<std::string> words = {
      "y",  "Y",    "yes",  "Yes",  "YES",   "n",     "N",     "no", "No",
      "NO", "true", "True", "TRUE", "false", "False", "FALSE", "on", "On",
      "ON", "off",  "Off",  "OFF",  "null",  "Null",  "NULL"};
  return words.count(text) > 0;
}

// Names, paths and flags: a letter or '/' first (after at most two '-'),
// then letters, digits and "._/-". Nothing YAML reads otherwise looks so.
bool safeAsPlain(const std::string& text) {
  static const std::regex plain("-{0,2}[A-Za-z/][-A-Za-z0-9._/]*");
  return std::regex_match(text, plain) && !isYamlWord(text);
}

// A literal block keeps the text exactly when it ends with one newline,
// starts with no space or newline (no indentation indicator is written),
// and holds only printable characters, tabs and newlines.
bool fitsLiteralBlock(const std::string& text) {
  size_t size = text.size();
  bool oneFinalNewline = size >= 2 && text[size - 1] == '\n' && text[size - 2] != '\n';
  bool printable = std::all_of(text.begin(), text.end(), [](char c) {
    unsigned char u = static_cast<unsigned char>(c);
    return u >= 0x20 ? u != 0x7f : (c == '\n' || c == '\t');
  });
  return oneFinalNewline && printable && text[0] != ' ' && text[0] != '\n';
}

void emitString(YAML::Emitter& out, const std::string& text) {
  if (safeAsPlain(text))
    out << text;
  else if (fitsLiteralBlock(text))
    out << YAML::Literal << text;
  else
    out << YAML::DoubleQuoted << text;
}

void emit(YAML::Emitter& out, const ordered_json& value);

void emitObject(YAML::Emitter& out, const ordered_json& object) {
  if (object.empty()) out << YAML::Flow;
  out << YAML::BeginMap;
  for (const auto& [key, item] : object.items()) {
    out << YAML::Key;
    emitString(out, key);
    out << YAML::Value;
    emit(out, item);
  }
  out << YAML::EndMap;
}

void emitArray(YAML::Emitter& out, const ordered_json& array) {
  if (array.empty()) out << YAML::Flow;
  out << YAML::BeginSeq;
  for (const ordered_json& item : array) emit(out, item);
  out << YAML::EndSeq;
}

void emit(YAML::Emitter& out, const ordered_json& value) {
  switch (value.type()) {
    case ordered_json::value_t::object:
      return emitObject(out, value);
    case ordered_json::value_t::array:
      return emitArray(out, value);
    case ordered_json::value_t::string:
      return emitString(out, value.get<std::string>());
    case ordered_json::value_t::boolean:
      out << value.get<bool>();
      return;
    case ordered_json::value_t::null:
    case ordered_json::value_t::discarded:
      out << YAML::Null;
      return;
    default:  // numbers: JSON's text of them is YAML's too
      out << dumpJson(value);
  }
}

}  // namespace

std::string yamlDocument(const ordered_json& document) {
  YAML::Emitter out;
  emit(out, document);
  return std::string(out.c_str()) + "\n";
}

std::string yamlStream(const std::vector<ordered_json>& documents) {
  std::string text;
  for (const ordered_json& document : documents) text += "---\n" + yamlDocument(document);
  return text;
}

}  // namespace strata
