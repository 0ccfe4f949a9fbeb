// Jinja's filters and tests, and the methods of str and dict that chat
// templates call, each with Python's meaning (str.strip() strips Unicode's
// whitespace, str.lower() is Unicode's full lower-casing). The names not
// here are refused by name rather than guessed at.
#include <unicode/locid.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>

#include <algorithm>
#include <set>

#include "data/chat/template_scope.h"
#include "strata/error.h"

namespace strata::train::jinja {
namespace {

// Python's str.isspace() characters.
bool isPythonSpace(UChar32 c) {
  return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 ||
         c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F ||
         c == 0x205F || c == 0x3000;
}

struct CodePoint {
  UChar32 value;
  size_t begin, end;  // byte range in the text
};

std::vector<CodePoint> codePoints(const std::string& text) {
  std::vector<CodePoint> out;
  const icu::UnicodeString unicode = icu::UnicodeString::fromUTF8(text);
  size_t byte = 0;
  for (int32_t i = 0; i < unicode.length(); i = unicode.moveIndex32(i, 1)) {
    const UChar32 c = unicode.char32At(i);
    const size_t width = c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
    out.push_back({c, byte, byte + width});
    byte += width;
  }
  return out;
}

// str.strip / lstrip / rstrip: whitespace, or the characters of `chars`.
std::string strip(const std::string& text, const Value& chars, bool left, bool right) {
  const std::vector<CodePoint> points = codePoints(text);
  std::set<UChar32> set;
  const bool whitespace = chars.isUndefined() || chars.isNone();
  if (!whitespace)
    for (const CodePoint& p : codePoints(chars.asString())) set.insert(p.value);
  auto stripped = [&](UChar32 c) { return whitespace ? isPythonSpace(c) : set.count(c) > 0; };
  size_t first = 0, last = points.size();
  if (left)
    while (first < last && stripped(points[first].value)) ++first;
  if (right)
    while (last > first && stripped(points[last - 1].value)) --last;
  if (first == last) return "";
  return text.substr(points[first].begin, points[last - 1].end - points[first].begin);
}

std::string caseMapped(const std::string& text, bool upper) {
  icu::UnicodeString unicode = icu::UnicodeString::fromUTF8(text);
  if (upper)
    unicode.toUpper(icu::Locale::getRoot());
  else
    unicode.toLower(icu::Locale::getRoot());
  std::string out;
  return unicode.toUTF8String(out);
}

std::string capitalized(const std::string& text, bool everyWord) {
  std::string out;
  bool previousCased = false;
  for (const CodePoint& p : codePoints(text)) {
    const std::string piece = text.substr(p.begin, p.end - p.begin);
    if (everyWord) {
      icu::UnicodeString one(p.value);
      if (previousCased)
        one.toLower(icu::Locale::getRoot());
      else
        one.toTitle(nullptr, icu::Locale::getRoot());
      one.toUTF8String(out);
      previousCased = u_hasBinaryProperty(p.value, UCHAR_CASED);
    } else {
      out += p.begin == 0 ? caseMapped(piece, true) : caseMapped(piece, false);
    }
  }
  return out;
}

std::vector<std::string> split(const std::string& text, const Value& separator, int64_t maxSplits) {
  std::vector<std::string> out;
  if (separator.isUndefined() || separator.isNone()) {
    const std::vector<CodePoint> points = codePoints(text);
    size_t i = 0;
    while (i < points.size()) {
      while (i < points.size() && isPythonSpace(points[i].value)) ++i;
      if (i == points.size()) break;
      if (maxSplits >= 0 && static_cast<int64_t>(out.size()) == maxSplits) {
        out.push_back(strip(text.substr(points[i].begin), Value(), false, true));
        break;
      }
      size_t j = i;
      while (j < points.size() && !isPythonSpace(points[j].value)) ++j;
      out.push_back(text.substr(
          points[i].begin, (j < points.size() ? points[j].begin : text.size()) - points[i].begin));
      i = j;
    }
    return out;
  }
  const std::string& sep = separator.asString();
  if (sep.empty()) throw ConfigError("split(): empty separator");
  size_t start = 0, found;
  while ((maxSplits < 0 || static_cast<int64_t>(out.size()) < maxSplits) &&
         (found = text.find(sep, start)) != std::string::npos) {
    out.push_back(text.substr(start, found - start));
    start = found + sep.size();
  }
  out.push_back(text.substr(start));
  return out;
}

std::string replaced(const std::string& text, const std::string& from, const std::string& to,
                     int64_t count) {
  std::string out;
  size_t start = 0;
  int64_t done = 0;
  if (from.empty())
    return text;  // Python would insert `to` between characters; no template needs it
  for (size_t found;
       (count < 0 || done < count) && (found = text.find(from, start)) != std::string::npos;
       ++done) {
    out += text.substr(start, found - start) + to;
    start = found + from.size();
  }
  return out + text.substr(start);
}

// Argument `index` of `args`, or the keyword `name`, or `fallback`.
Value argument(const CallArgs& args, size_t index, const char* name, Value fallback = Value()) {
  if (index < args.positional.size()) return args.positional[index];
  for (const auto& [key, value] : args.keywords)
    if (key == name) return value;
  return fallback;
}

const std::string& stringArgument(Scope& scope, int line, const Value& value,
                                  const std::string& what) {
  if (!value.isString()) scope.fail(line, what + " must be a string, not a " + value.kindName());
  return value.asString();
}

Value stringMethod(const std::string& text, const std::string& name) {
  auto method = [&](auto body) { return Value::callable("str." + name, body); };
  if (name == "strip" || name == "lstrip" || name == "rstrip")
    return method([text, name](const CallArgs& args) {
      return Value(strip(text, argument(args, 0, "chars"), name != "rstrip", name != "lstrip"));
    });
  if (name == "split")
    return method([text](const CallArgs& args) {
      ValueList parts;
      const Value max = argument(args, 1, "maxsplit", Value(int64_t{-1}));
      for (std::string& part : split(text, argument(args, 0, "sep"), max.asInt()))
        parts.emplace_back(std::move(part));
      return Value::list(std::move(parts));
    });
  if (name == "startswith" || name == "endswith")
    return method([text, name](const CallArgs& args) {
      const Value affixes = argument(args, 0, "prefix");
      const ValueList options = affixes.isString() ? ValueList{affixes} : affixes.iterate();
      for (const Value& option : options) {
        if (!option.isString()) throw ConfigError("expects strings");
        const std::string& a = option.asString();
        if (a.size() <= text.size() &&
            text.compare(name == "startswith" ? 0 : text.size() - a.size(), a.size(), a) == 0)
          return Value(true);
      }
      return Value(false);
    });
  if (name == "lower" || name == "upper")
    return method(
        [text, name](const CallArgs&) { return Value(caseMapped(text, name == "upper")); });
  if (name == "title" || name == "capitalize")
    return method(
        [text, name](const CallArgs&) { return Value(capitalized(text, name == "title")); });
  if (name == "replace")
    return method([text](const CallArgs& args) {
      const Value from = argument(args, 0, "old"), to = argument(args, 1, "new");
      if (!from.isString() || !to.isString()) throw ConfigError("expects two strings");
      return Value(replaced(text, from.asString(), to.asString(),
                            argument(args, 2, "count", Value(int64_t{-1})).asInt()));
    });
  return Value::undefined("str has no method '" + name + "' here");
}

Value dictMethod(const Value& dict, const std::string& name) {
  if (name == "get")
    return Value::callable("dict.get", [dict](const CallArgs& args) {
      const Value key = argument(args, 0, "key");
      const Value* found = key.isString() ? dict.find(key.asString()) : nullptr;
      return found ? *found : argument(args, 1, "default", Value::none());
    });
  if (name == "items" || name == "keys" || name == "values")
    return Value::callable("dict." + name, [dict, name](const CallArgs&) {
      ValueList out;
      for (const auto& [key, value] : dict.asDict()) {
        if (name == "items")
          out.push_back(Value::list({Value(key), value}));
        else
          out.push_back(name == "keys" ? Value(key) : value);
      }
      return Value::list(std::move(out));
    });
  return Value();
}

Value attributeOrItem(Scope& scope, int line, const Value& value, const std::string& name) {
  return value.isUndefined() ? value : attributeOf(scope, line, value, name);
}

// select / reject / selectattr / rejectattr: the items whose test (or truth)
// is `keep`.
Value selected(Scope& scope, int line, const Value& value, const CallArgs& args, bool byAttribute,
               bool keep) {
  ValueList out;
  size_t first = 0;
  std::string attribute;
  if (byAttribute)
    attribute = stringArgument(scope, line, argument(args, first++, "attribute"), "the attribute");
  const bool hasTest = args.positional.size() > first;
  const std::string test =
      hasTest ? stringArgument(scope, line, args.positional[first], "the test") : "";
  CallArgs testArgs;
  if (hasTest)
    testArgs.positional.assign(args.positional.begin() + static_cast<long>(first) + 1,
                               args.positional.end());
  for (const Value& item : value.iterate()) {
    const Value subject = byAttribute ? attributeOrItem(scope, line, item, attribute) : item;
    const bool passes =
        hasTest ? applyTest(scope, line, test, subject, testArgs) : subject.truthy();
    if (passes == keep) out.push_back(item);
  }
  return Value::list(std::move(out));
}

}  // namespace

bool isKnownFilter(const std::string& name) {
  static const std::set<std::string> kFilters = {
      "default",    "d",      "safe",   "string",     "trim",       "lower",   "upper",
      "capitalize", "title",  "tojson", "replace",    "int",        "float",   "abs",
      "length",     "count",  "list",   "first",      "last",       "reverse", "join",
      "items",      "select", "reject", "selectattr", "rejectattr", "map"};
  return kFilters.count(name) > 0;
}

bool isKnownTest(const std::string& name) {
  static const std::set<std::string> kTests = {
      "defined", "undefined",   "none",    "boolean",  "true",     "false",    "string", "number",
      "integer", "float",       "mapping", "iterable", "sequence", "callable", "lower",  "upper",
      "eq",      "equalto",     "==",      "ne",       "!=",       "sameas",   "in",     "even",
      "odd",     "divisibleby", "lt",      "gt",       "le",       "ge"};
  return kTests.count(name) > 0;
}

Value attributeOf(Scope& scope, int line, const Value& value, const std::string& name) {
  switch (value.kind()) {
    case Value::Kind::kDict: {
      if (Value method = dictMethod(value, name); !method.isUndefined()) return method;
      if (const Value* found = value.find(name)) return *found;
      return Value::undefined("the dict has no attribute '" + name + "'");
    }
    case Value::Kind::kNamespace: {
      if (const Value* found = value.find(name)) return *found;
      return Value::undefined("the namespace has no attribute '" + name + "'");
    }
    case Value::Kind::kString:
      return stringMethod(value.asString(), name);
    default:
      return Value::undefined("a " + value.kindName() + " has no attribute '" + name + "'");
  }
}

Value applyFilter(Scope& scope, int line, const std::string& name, const Value& value,
                  const CallArgs& args) {
  if (name == "default" || name == "d") {
    const bool boolean = argument(args, 1, "boolean", Value(false)).truthy();
    if (value.isUndefined() || (boolean && !value.truthy()))
      return argument(args, 0, "default_value", Value(""));
    return value;
  }
  if (name == "safe") return value;
  if (name == "string") return Value(value.str());
  if (name == "trim") return Value(strip(value.str(), argument(args, 0, "chars"), true, true));
  if (name == "lower" || name == "upper") return Value(caseMapped(value.str(), name == "upper"));
  if (name == "capitalize" || name == "title")
    return Value(capitalized(value.str(), name == "title"));
  if (name == "tojson") {
    const Value indent = argument(args, 0, "indent");
    try {
      return Value(
          value.json(indent.kind() == Value::Kind::kInt ? static_cast<int>(indent.asInt()) : -1));
    } catch (const ConfigError& error) {
      scope.fail(line, error.what());
    }
  }
  if (name == "replace") {
    const Value from = argument(args, 0, "old"), to = argument(args, 1, "new");
    return Value(replaced(value.str(), stringArgument(scope, line, from, "replace's old"),
                          stringArgument(scope, line, to, "replace's new"),
                          argument(args, 2, "count", Value(int64_t{-1})).asInt()));
  }
  if (name == "int" || name == "float") {
    if (value.isNumber())
      return name == "int" ? Value(static_cast<int64_t>(value.asFloat())) : Value(value.asFloat());
    try {
      return name == "int" ? Value(static_cast<int64_t>(std::stoll(value.str())))
                           : Value(std::stod(value.str()));
    } catch (const std::exception&) {
      return argument(args, 0, "default", name == "int" ? Value(int64_t{0}) : Value(0.0));
    }
  }
  if (name == "abs") {
    if (!value.isNumber()) scope.fail(line, "abs needs a number, not a " + value.kindName());
    return value.kind() == Value::Kind::kFloat ? Value(std::abs(value.asFloat()))
                                               : Value(std::abs(value.asInt()));
  }
  // The filters below take a sequence.
  requireDefined(scope, line, value);
  try {
    if (name == "length" || name == "count") return Value(value.length());
    if (name == "list") return Value::list(value.iterate());
    if (name == "first" || name == "last") {
      const ValueList items = value.iterate();
      if (items.empty()) return Value::undefined("the sequence is empty");
      return name == "first" ? items.front() : items.back();
    }
    if (name == "reverse") {
      ValueList items = value.iterate();
      std::reverse(items.begin(), items.end());
      if (!value.isString()) return Value::list(std::move(items));
      std::string out;
      for (const Value& c : items) out += c.asString();
      return Value(out);
    }
    if (name == "join") {
      const Value separator = argument(args, 0, "d", Value(""));
      const Value attribute = argument(args, 1, "attribute");
      std::string out;
      bool firstItem = true;
      for (const Value& item : value.iterate()) {
        if (!firstItem) out += separator.str();
        firstItem = false;
        out +=
            (attribute.isString() ? attributeOrItem(scope, line, item, attribute.asString()) : item)
                .str();
      }
      return Value(out);
    }
    if (name == "items") {
      if (value.kind() != Value::Kind::kDict)
        scope.fail(line, "items needs a dict, not a " + value.kindName());
      return dictMethod(value, "items").asCallable()(CallArgs{});
    }
    if (name == "select" || name == "reject")
      return selected(scope, line, value, args, false, name == "select");
    if (name == "selectattr" || name == "rejectattr")
      return selected(scope, line, value, args, true, name == "selectattr");
    if (name == "map") {
      ValueList out;
      const Value attribute = argument(args, 99, "attribute");
      for (const Value& item : value.iterate()) {
        if (attribute.isString()) {
          out.push_back(attributeOrItem(scope, line, item, attribute.asString()));
        } else {
          if (args.positional.empty()) scope.fail(line, "map needs a filter name or attribute=");
          CallArgs rest;
          rest.positional.assign(args.positional.begin() + 1, args.positional.end());
          out.push_back(applyFilter(scope, line,
                                    stringArgument(scope, line, args.positional[0], "map's filter"),
                                    item, rest));
        }
      }
      return Value::list(std::move(out));
    }
  } catch (const ConfigError& error) {
    const std::string what = error.what();
    if (what.rfind(scope.origin(), 0) == 0) throw;
    scope.fail(line, name + ": " + what);
  }
  scope.fail(line, "the filter '" + name + "' is not implemented by Strata's chat templates");
}

bool applyTest(Scope& scope, int line, const std::string& name, const Value& value,
               const CallArgs& args) {
  using Kind = Value::Kind;
  const Kind kind = value.kind();
  if (name == "defined") return kind != Kind::kUndefined;
  if (name == "undefined") return kind == Kind::kUndefined;
  if (name == "none") return kind == Kind::kNone;
  if (name == "boolean") return kind == Kind::kBool;
  if (name == "true") return kind == Kind::kBool && value.asBool();
  if (name == "false") return kind == Kind::kBool && !value.asBool();
  if (name == "string") return kind == Kind::kString;
  if (name == "number") return kind == Kind::kInt || kind == Kind::kFloat;
  if (name == "integer") return kind == Kind::kInt;
  if (name == "float") return kind == Kind::kFloat;
  if (name == "mapping") return kind == Kind::kDict;
  if (name == "iterable")
    return kind == Kind::kString || kind == Kind::kList || kind == Kind::kDict;
  if (name == "sequence")
    return kind == Kind::kString || kind == Kind::kList || kind == Kind::kDict;
  if (name == "callable") return kind == Kind::kCallable;
  if (name == "lower")
    return value.isString() && caseMapped(value.asString(), false) == value.asString();
  if (name == "upper")
    return value.isString() && caseMapped(value.asString(), true) == value.asString();
  const Value other = argument(args, 0, "other");
  if (name == "eq" || name == "equalto" || name == "==") return equal(value, other);
  if (name == "ne" || name == "!=") return !equal(value, other);
  if (name == "sameas") return equal(value, other) && value.kind() == other.kind();
  if (name == "in") {
    if (other.isString())
      return value.isString() && other.asString().find(value.asString()) != std::string::npos;
    if (other.kind() == Kind::kDict)
      return value.isString() && other.find(value.asString()) != nullptr;
    if (other.kind() != Kind::kList) scope.fail(line, "the test 'in' needs a string, list or dict");
    for (const Value& item : other.asList())
      if (equal(item, value)) return true;
    return false;
  }
  if (name == "even" || name == "odd" || name == "divisibleby") {
    if (kind != Kind::kInt)
      scope.fail(line, "the test '" + name + "' needs an integer, not a " + value.kindName());
    const int64_t divisor = name == "divisibleby" ? other.asInt() : 2;
    if (divisor == 0) scope.fail(line, "divisibleby 0");
    const bool divisible = value.asInt() % divisor == 0;
    return name == "odd" ? !divisible : divisible;
  }
  if (name == "lt" || name == "gt" || name == "le" || name == "ge") {
    if (!value.isNumber() || !other.isNumber())
      scope.fail(line, "the test '" + name + "' compares numbers");
    const double a = value.asFloat(), b = other.asFloat();
    return name == "lt" ? a < b : name == "gt" ? a > b : name == "le" ? a <= b : a >= b;
  }
  scope.fail(line, "the test '" + name + "' is not implemented by Strata's chat templates");
}

}  // namespace strata::train::jinja
