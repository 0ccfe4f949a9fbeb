#include "strata/train/config/toml.h"

#include <cctype>
#include <set>
#include <sstream>

#include "strata/error.h"
#include "strata/util/parse_number.h"
#include "train/config/number_text.h"

namespace strata::train {
namespace {

// Reads one line of the document; every error names the file and line.
class LineParser {
 public:
  LineParser(const std::string& line, const std::string& where) : text_(line), where_(where) {}

  [[noreturn]] void fail(const std::string& message) const {
    throw ConfigError(where_ + ": " + message);
  }
  void skipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t')) ++pos_;
  }
  bool atEnd() {
    skipSpace();
    return pos_ == text_.size() || text_[pos_] == '#';
  }
  bool consume(char c) {
    skipSpace();
    if (pos_ < text_.size() && text_[pos_] == c) return ++pos_, true;
    return false;
  }
  std::string bareName(const char* what) {
    skipSpace();
    size_t start = pos_;
    while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) ||
                                   text_[pos_] == '_' || text_[pos_] == '-'))
      ++pos_;
    if (pos_ == start) fail(std::string("expected a ") + what + " at column " + column());
    return text_.substr(start, pos_ - start);
  }
  TomlValue value() {
    skipSpace();
    if (pos_ == text_.size()) fail("missing value");
    char c = text_[pos_];
    if (c == '"') return basicString();
    if (c == '\'') return literalString();
    if (c == '[' || c == '{') fail("arrays and inline tables are not supported");
    return scalar();
  }
  std::string column() const { return std::to_string(pos_ + 1); }

 private:
  std::string basicString() {
    std::string out;
    for (++pos_; pos_ < text_.size(); ++pos_) {
      char c = text_[pos_];
      if (c == '"') return ++pos_, out;
      if (c != '\\') {
        out += c;
        continue;
      }
      if (++pos_ == text_.size()) break;
      switch (text_[pos_]) {
        case '"':
          out += '"';
          break;
        case '\\':
          out += '\\';
          break;
        case 'n':
          out += '\n';
          break;
        case 't':
          out += '\t';
          break;
        case 'r':
          out += '\r';
          break;
        default:
          fail(std::string("unsupported escape '\\") + text_[pos_] + "' in string");
      }
    }
    fail("unterminated string");
  }
  std::string literalString() {
    size_t end = text_.find('\'', pos_ + 1);
    if (end == std::string::npos) fail("unterminated string");
    std::string out = text_.substr(pos_ + 1, end - pos_ - 1);
    pos_ = end + 1;
    return out;
  }
  TomlValue scalar() {
    size_t start = pos_;
    while (pos_ < text_.size() && text_[pos_] != '#' && text_[pos_] != ' ' && text_[pos_] != '\t')
      ++pos_;
    std::string word = text_.substr(start, pos_ - start);
    if (word == "true") return true;
    if (word == "false") return false;
    std::string digits;
    for (size_t i = 0; i < word.size(); ++i) {
      bool between = i > 0 && i + 1 < word.size() && std::isdigit((unsigned char)word[i - 1]) &&
                     std::isdigit((unsigned char)word[i + 1]);
      if (word[i] == '_' && between) continue;
      digits += word[i];
    }
    bool isFloat = digits.find_first_of(".eE") != std::string::npos;
    if (!isFloat) {
      if (std::optional<int64_t> integer = parseInteger(digits)) return *integer;
    } else if (std::isdigit(static_cast<unsigned char>(digits.back()))) {
      if (std::optional<double> real = parseReal(digits)) return *real;
    }
    fail("'" + word + "' is not a string, number or boolean");
  }

  const std::string& text_;
  std::string where_;
  size_t pos_ = 0;
};

}  // namespace

std::vector<TomlEntry> parseToml(const std::string& text, const std::string& fileName) {
  std::vector<TomlEntry> entries;
  std::set<std::string> tables, keys;
  std::string table;
  std::istringstream lines(text);
  std::string line;
  for (int number = 1; std::getline(lines, line); ++number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    LineParser parser(line, fileName + ":" + std::to_string(number));
    if (parser.atEnd()) continue;
    if (parser.consume('[')) {
      table = parser.bareName("table name");
      if (!parser.consume(']')) parser.fail("expected ']' after table name '" + table + "'");
      if (!parser.atEnd()) parser.fail("unexpected text after table header [" + table + "]");
      if (!tables.insert(table).second) parser.fail("table [" + table + "] appears twice");
      continue;
    }
    std::string key = parser.bareName("key");
    if (!parser.consume('=')) parser.fail("expected '=' after key '" + key + "'");
    TomlValue value = parser.value();
    if (!parser.atEnd()) parser.fail("unexpected text after the value of '" + key + "'");
    std::string fullKey = table.empty() ? key : table + "." + key;
    if (!keys.insert(fullKey).second) parser.fail("key '" + fullKey + "' appears twice");
    entries.push_back({table, key, std::move(value), number});
  }
  return entries;
}

const char* tomlTypeName(const TomlValue& value) {
  static const char* const kNames[] = {"string", "integer", "float", "boolean"};
  return kNames[value.index()];
}

std::string tomlLiteral(const TomlValue& value) {
  std::ostringstream out;
  if (auto* s = std::get_if<std::string>(&value)) {
    out << '"';
    for (char c : *s) {
      if (c == '"' || c == '\\')
        out << '\\' << c;
      else if (c == '\n')
        out << "\\n";
      else if (c == '\t')
        out << "\\t";
      else if (c == '\r')
        out << "\\r";
      else
        out << c;
    }
    out << '"';
  } else if (auto* i = std::get_if<int64_t>(&value)) {
    out << *i;
  } else if (auto* d = std::get_if<double>(&value)) {
    // Keep a '.' or 'e' so it reads back as a float.
    std::string digits = shortestDouble(*d);
    if (digits.find_first_of(".eEn") == std::string::npos) digits += ".0";
    out << digits;
  } else {
    out << (std::get<bool>(value) ? "true" : "false");
  }
  return out.str();
}

}  // namespace strata::train
