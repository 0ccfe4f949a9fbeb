// The values a chat template computes with: Jinja's (and so Python's) kinds,
// as transformers hands them to a template: undefined, none, booleans,
// integers, floats, strings, lists, dicts that keep insertion order (the
// conversation's JSON objects), namespaces (Jinja's one mutable object) and
// callables (globals such as raise_exception, and bound methods such as
// str.strip). Lists and dicts are shared and never changed once built, so
// copying a Value is cheap. Nothing here blocks; str(), repr() and json()
// follow Python's spelling of each kind.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace strata::train::jinja {

class Value;
using ValueList = std::vector<Value>;
using ValueDict = std::vector<std::pair<std::string, Value>>;  // in insertion order
struct CallArgs {
  std::vector<Value> positional;
  ValueDict keywords;
};
using Callable = std::function<Value(const CallArgs&)>;

class Value {
 public:
  enum class Kind {
    kUndefined,
    kNone,
    kBool,
    kInt,
    kFloat,
    kString,
    kList,
    kDict,
    kNamespace,
    kCallable
  };

  Value() = default;  // undefined
  // Undefined, with what went missing ("'x' is undefined") for the error
  // when it is used.
  static Value undefined(std::string why);
  Value(bool b) : kind_(Kind::kBool), int_(b) {}
  Value(int64_t i) : kind_(Kind::kInt), int_(i) {}
  Value(int i) : kind_(Kind::kInt), int_(i) {}
  Value(double f) : kind_(Kind::kFloat), float_(f) {}
  Value(std::string s) : kind_(Kind::kString), name_(std::move(s)) {}
  Value(const char* s) : Value(std::string(s)) {}
  static Value none();
  static Value list(ValueList items);
  static Value tuple(ValueList items);  // a list that repr() writes as (a, b)
  static Value dict(ValueDict items);
  static Value makeNamespace(ValueDict items);
  static Value callable(std::string name, Callable function);
  // A JSON value as Python's json.loads gives it (objects keep their order).
  static Value fromJson(const nlohmann::ordered_json& json);

  Kind kind() const { return kind_; }
  bool isUndefined() const { return kind_ == Kind::kUndefined; }
  bool isNone() const { return kind_ == Kind::kNone; }
  bool isString() const { return kind_ == Kind::kString; }
  bool isNumber() const {
    return kind_ == Kind::kInt || kind_ == Kind::kFloat || kind_ == Kind::kBool;
  }
  bool isMapping() const { return kind_ == Kind::kDict || kind_ == Kind::kNamespace; }

  bool asBool() const { return int_ != 0; }
  int64_t asInt() const { return int_; }
  double asFloat() const { return kind_ == Kind::kFloat ? float_ : static_cast<double>(int_); }
  const std::string& asString() const { return name_; }
  const ValueList& asList() const { return *list_; }
  const ValueDict& asDict() const { return *dict_; }
  ValueDict& namespaceItems() const { return *dict_; }  // a namespace's, which `set` changes
  const Callable& asCallable() const { return *callable_; }
  // For an undefined value, why it is; for a callable, its name.
  const std::string& name() const { return name_; }

  // Python's truth: false for undefined, none, 0, and empty strings, lists, dicts.
  bool truthy() const;
  // The entry `key` of a dict or namespace, or null.
  const Value* find(std::string_view key) const;
  // The elements a for loop visits: a list's items, a dict's keys, a
  // string's characters; none for undefined. Throws for other kinds.
  ValueList iterate() const;
  // The length of a string (in characters), list or dict.
  int64_t length() const;

  std::string str() const;   // Python's str(): what {{ value }} writes
  std::string repr() const;  // Python's repr(), as str() writes inside lists and dicts
  // json.dumps(value, ensure_ascii=False), indent < 0 for none.
  std::string json(int indent = -1) const;
  // A word for the kind, for errors: "string", "list", ...
  std::string kindName() const;

 private:
  Kind kind_ = Kind::kUndefined;
  int64_t int_ = 0;  // a bool's or int's value; for a list, 1 when it is a tuple
  double float_ = 0;
  std::string name_;  // a string's text, an undefined or callable's name
  std::shared_ptr<const ValueList> list_;
  std::shared_ptr<ValueDict> dict_;
  std::shared_ptr<const Callable> callable_;
};

// Python's ==, which Jinja's == and `in` use: numbers by value, lists and
// dicts element by element, undefined equal to undefined only.
bool equal(const Value& a, const Value& b);

// Python's float repr: the shortest digits that read back the same, fixed
// between 1e-4 and 1e16, else with an exponent ("1e+16", "1.5e-05").
std::string pythonFloat(double value);

}  // namespace strata::train::jinja
