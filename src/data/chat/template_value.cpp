#include "data/chat/template_value.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "strata/error.h"

namespace strata::train::jinja {
namespace {

// Characters of UTF-8 text, counted by their lead bytes.
int64_t characters(const std::string& text) {
  int64_t count = 0;
  for (unsigned char c : text) count += (c & 0xC0) != 0x80;
  return count;
}

// The UTF-8 characters of `text`, one string each.
ValueList characterList(const std::string& text) {
  ValueList out;
  for (size_t i = 0; i < text.size();) {
    size_t next = i + 1;
    while (next < text.size() && (static_cast<unsigned char>(text[next]) & 0xC0) == 0x80) ++next;
    out.emplace_back(text.substr(i, next - i));
    i = next;
  }
  return out;
}

// json.dumps's string: quotes, backslash and control characters escaped,
// everything else (ensure_ascii=False) as it is.
std::string jsonString(const std::string& text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      default:
        if (c < 0x20) {
          char escaped[8];
          std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
          out += escaped;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

// repr() of a str: single quotes unless the text holds one and no double
// quote; backslash, the quote and ASCII control characters escaped.
std::string pythonStringRepr(const std::string& text) {
  const bool doubleQuotes =
      text.find('\'') != std::string::npos && text.find('"') == std::string::npos;
  const char quote = doubleQuotes ? '"' : '\'';
  std::string out(1, quote);
  for (unsigned char c : text) {
    if (c == '\\')
      out += "\\\\";
    else if (c == quote)
      out += std::string("\\") + quote;
    else if (c == '\n')
      out += "\\n";
    else if (c == '\r')
      out += "\\r";
    else if (c == '\t')
      out += "\\t";
    else if (c < 0x20 || c == 0x7F) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", c);
      out += escaped;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + quote;
}

void appendJson(const Value& value, int indent, int depth, std::string& out);

void newline(int indent, int depth, std::string& out) {
  out += '\n';
  out.append(static_cast<size_t>(indent * depth), ' ');
}

template <typename Items, typename Each>
void appendJsonItems(const Items& items, char open, char close, int indent, int depth,
                     std::string& out, Each each) {
  out += open;
  if (items.empty()) {
    out += close;
    return;
  }
  bool first = true;
  for (const auto& item : items) {
    if (!first) out += indent < 0 ? ", " : ",";
    first = false;
    if (indent >= 0) newline(indent, depth + 1, out);
    each(item);
  }
  if (indent >= 0) newline(indent, depth, out);
  out += close;
}

void appendJson(const Value& value, int indent, int depth, std::string& out) {
  switch (value.kind()) {
    case Value::Kind::kNone:
      out += "null";
      return;
    case Value::Kind::kBool:
      out += value.asBool() ? "true" : "false";
      return;
    case Value::Kind::kInt:
      out += std::to_string(value.asInt());
      return;
    case Value::Kind::kFloat: {
      const double f = value.asFloat();
      out += std::isnan(f)   ? "NaN"
             : std::isinf(f) ? (f > 0 ? "Infinity" : "-Infinity")
                             : pythonFloat(f);
      return;
    }
    case Value::Kind::kString:
      out += jsonString(value.asString());
      return;
    case Value::Kind::kList:
      appendJsonItems(value.asList(), '[', ']', indent, depth, out,
                      [&](const Value& item) { appendJson(item, indent, depth + 1, out); });
      return;
    case Value::Kind::kDict:
    case Value::Kind::kNamespace:
      appendJsonItems(value.asDict(), '{', '}', indent, depth, out, [&](const auto& entry) {
        out += jsonString(entry.first) + ": ";
        appendJson(entry.second, indent, depth + 1, out);
      });
      return;
    default:
      throw ConfigError("tojson: a " + value.kindName() + " is not JSON serializable");
  }
}

}  // namespace

Value Value::undefined(std::string why) {
  Value v;
  v.name_ = std::move(why);
  return v;
}

Value Value::none() {
  Value v;
  v.kind_ = Kind::kNone;
  return v;
}

Value Value::list(ValueList items) {
  Value v;
  v.kind_ = Kind::kList;
  v.list_ = std::make_shared<const ValueList>(std::move(items));
  return v;
}

Value Value::tuple(ValueList items) {
  Value v = list(std::move(items));
  v.int_ = 1;
  return v;
}

Value Value::dict(ValueDict items) {
  Value v;
  v.kind_ = Kind::kDict;
  v.dict_ = std::make_shared<ValueDict>(std::move(items));
  return v;
}

Value Value::makeNamespace(ValueDict items) {
  Value v = dict(std::move(items));
  v.kind_ = Kind::kNamespace;
  return v;
}

Value Value::callable(std::string name, Callable function) {
  Value v;
  v.kind_ = Kind::kCallable;
  v.name_ = std::move(name);
  v.callable_ = std::make_shared<const Callable>(std::move(function));
  return v;
}

Value Value::fromJson(const nlohmann::ordered_json& json) {
  switch (json.type()) {
    case nlohmann::ordered_json::value_t::null:
      return none();
    case nlohmann::ordered_json::value_t::boolean:
      return Value(json.get<bool>());
    case nlohmann::ordered_json::value_t::number_integer:
    case nlohmann::ordered_json::value_t::number_unsigned:
      return Value(json.get<int64_t>());
    case nlohmann::ordered_json::value_t::number_float:
      return Value(json.get<double>());
    case nlohmann::ordered_json::value_t::string:
      return Value(json.get<std::string>());
    case nlohmann::ordered_json::value_t::array: {
      ValueList items;
      for (const auto& item : json) items.push_back(fromJson(item));
      return list(std::move(items));
    }
    case nlohmann::ordered_json::value_t::object: {
      ValueDict items;
      for (const auto& [key, item] : json.items()) items.emplace_back(key, fromJson(item));
      return dict(std::move(items));
    }
    default:
      throw ConfigError("a JSON value of kind " + std::string(json.type_name()) +
                        " has no template value");
  }
}

bool Value::truthy() const {
  switch (kind_) {
    case Kind::kUndefined:
    case Kind::kNone:
      return false;
    case Kind::kBool:
    case Kind::kInt:
      return int_ != 0;
    case Kind::kFloat:
      return float_ != 0;
    case Kind::kString:
      return !name_.empty();
    case Kind::kList:
      return !list_->empty();
    case Kind::kDict:
      return !dict_->empty();
    default:
      return true;
  }
}

const Value* Value::find(std::string_view key) const {
  if (!isMapping()) return nullptr;
  for (const auto& [name, value] : *dict_)
    if (name == key) return &value;
  return nullptr;
}

ValueList Value::iterate() const {
  switch (kind_) {
    case Kind::kUndefined:
      return {};
    case Kind::kList:
      return *list_;
    case Kind::kString:
      return characterList(name_);
    case Kind::kDict: {
      ValueList keys;
      for (const auto& entry : *dict_) keys.emplace_back(entry.first);
      return keys;
    }
    default:
      throw ConfigError("a " + kindName() + " cannot be iterated over");
  }
}

int64_t Value::length() const {
  switch (kind_) {
    case Kind::kUndefined:
      return 0;
    case Kind::kString:
      return characters(name_);
    case Kind::kList:
      return static_cast<int64_t>(list_->size());
    case Kind::kDict:
    case Kind::kNamespace:
      return static_cast<int64_t>(dict_->size());
    default:
      throw ConfigError("a " + kindName() + " has no length");
  }
}

std::string Value::str() const {
  switch (kind_) {
    case Kind::kUndefined:
      return "";
    case Kind::kString:
      return name_;
    default:
      return repr();
  }
}

std::string Value::repr() const {
  switch (kind_) {
    case Kind::kUndefined:
      return "";
    case Kind::kNone:
      return "None";
    case Kind::kBool:
      return int_ ? "True" : "False";
    case Kind::kInt:
      return std::to_string(int_);
    case Kind::kFloat:
      return std::isnan(float_)   ? "nan"
             : std::isinf(float_) ? (float_ > 0 ? "inf" : "-inf")
                                  : pythonFloat(float_);
    case Kind::kString:
      return pythonStringRepr(name_);
    case Kind::kList: {
      std::string out = int_ ? "(" : "[";
      for (size_t i = 0; i < list_->size(); ++i) out += (i ? ", " : "") + (*list_)[i].repr();
      if (int_ && list_->size() == 1) out += ",";
      return out + (int_ ? ")" : "]");
    }
    case Kind::kDict: {
      std::string out = "{";
      for (size_t i = 0; i < dict_->size(); ++i)
        out += (i ? ", " : "") + pythonStringRepr((*dict_)[i].first) + ": " +
               (*dict_)[i].second.repr();
      return out + "}";
    }
    case Kind::kNamespace:
      return "<Namespace>";
    case Kind::kCallable:
      return "<function " + name_ + ">";
  }
  return "";
}

std::string Value::json(int indent) const {
  std::string out;
  appendJson(*this, indent, 0, out);
  return out;
}

std::string Value::kindName() const {
  switch (kind_) {
    case Kind::kUndefined:
      return "undefined value";
    case Kind::kNone:
      return "none";
    case Kind::kBool:
      return "boolean";
    case Kind::kInt:
      return "integer";
    case Kind::kFloat:
      return "float";
    case Kind::kString:
      return "string";
    case Kind::kList:
      return "list";
    case Kind::kDict:
      return "dict";
    case Kind::kNamespace:
      return "namespace";
    case Kind::kCallable:
      return "function";
  }
  return "value";
}

bool equal(const Value& a, const Value& b) {
  using Kind = Value::Kind;
  if (a.isNumber() && b.isNumber()) {
    if (a.kind() == Kind::kFloat || b.kind() == Kind::kFloat) return a.asFloat() == b.asFloat();
    return a.asInt() == b.asInt();
  }
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case Kind::kUndefined:
    case Kind::kNone:
      return true;
    case Kind::kString:
      return a.asString() == b.asString();
    case Kind::kList: {
      const auto& x = a.asList();
      const auto& y = b.asList();
      if (x.size() != y.size()) return false;
      for (size_t i = 0; i < x.size(); ++i)
        if (!equal(x[i], y[i])) return false;
      return true;
    }
    case Kind::kDict: {
      const auto& x = a.asDict();
      if (x.size() != b.asDict().size()) return false;
      for (const auto& [key, value] : x) {
        const Value* other = b.find(key);
        if (!other || !equal(value, *other)) return false;
      }
      return true;
    }
    case Kind::kNamespace:
      return &a.namespaceItems() == &b.namespaceItems();
    default:
      return &a.asCallable() == &b.asCallable();  // the same function
  }
}

std::string pythonFloat(double value) {
  char buffer[64];
  // Shortest round-trip digits in scientific form: d[.ddd]e±XX.
  auto [end, error] =
      std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::scientific);
  std::string scientific(buffer, end);
  const size_t e = scientific.find('e');
  const int exponent = std::stoi(scientific.substr(e + 1));
  std::string digits;
  bool negative = false;
  for (char c : scientific.substr(0, e)) {
    if (c == '-')
      negative = true;
    else if (c != '.')
      digits += c;
  }
  std::string out = negative ? "-" : "";
  if (exponent < -4 || exponent >= 16) {
    out += digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    char tail[16];
    std::snprintf(tail, sizeof tail, "e%c%02d", exponent < 0 ? '-' : '+', std::abs(exponent));
    return out + tail;
  }
  if (exponent < 0)
    return out + "0." + std::string(static_cast<size_t>(-exponent - 1), '0') + digits;
  const size_t whole = static_cast<size_t>(exponent) + 1;
  if (digits.size() <= whole) return out + digits + std::string(whole - digits.size(), '0') + ".0";
  return out + digits.substr(0, whole) + "." + digits.substr(whole);
}

}  // namespace strata::train::jinja
