// Evaluates the parsed template (template_syntax.h) with Python's meaning
// of each operator, as Jinja does: `and`/`or` give an operand, `+` adds
// numbers or joins strings and lists, `/` divides to a float, `//` and `%`
// floor, `~` joins the str() of both sides, `in` looks in strings, lists and
// dicts. Using an undefined value for anything but output, truth, `is
// defined` and a loop throws, naming it.
#include <cmath>

#include "data/chat/template_scope.h"
#include "data/chat/template_syntax.h"
#include "strata/error.h"

namespace strata::train::jinja {
namespace {

void runBody(const Body& body, Scope& scope) {
  for (const auto& stmt : body) {
    stmt->run(scope);
    if (scope.control != Scope::LoopControl::kNone) return;
  }
}

int64_t floorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

Value arithmetic(Scope& scope, int line, const std::string& op, const Value& a, const Value& b) {
  requireDefined(scope, line, a);
  requireDefined(scope, line, b);
  if (op == "+") {
    if (a.isString() && b.isString()) return Value(a.asString() + b.asString());
    if (a.kind() == Value::Kind::kList && b.kind() == Value::Kind::kList) {
      ValueList joined = a.asList();
      joined.insert(joined.end(), b.asList().begin(), b.asList().end());
      return Value::list(std::move(joined));
    }
  }
  if (op == "*" && (a.isString() || b.isString()) &&
      (a.kind() == Value::Kind::kInt || b.kind() == Value::Kind::kInt)) {
    const Value& text = a.isString() ? a : b;
    std::string out;
    for (int64_t i = 0; i < (a.isString() ? b : a).asInt(); ++i) out += text.asString();
    return Value(out);
  }
  if (!a.isNumber() || !b.isNumber())
    scope.fail(
        line, "unsupported operand kinds for " + op + ": " + a.kindName() + " and " + b.kindName());
  const bool floats = a.kind() == Value::Kind::kFloat || b.kind() == Value::Kind::kFloat;
  if ((op == "/" || op == "//" || op == "%") && b.asFloat() == 0)
    scope.fail(line, "division by zero");
  if (op == "/") return Value(a.asFloat() / b.asFloat());
  if (op == "**") {
    if (!floats && b.asInt() >= 0)
      return Value(static_cast<int64_t>(std::llround(std::pow(a.asFloat(), b.asFloat()))));
    return Value(std::pow(a.asFloat(), b.asFloat()));
  }
  if (floats) {
    const double x = a.asFloat(), y = b.asFloat();
    if (op == "+") return Value(x + y);
    if (op == "-") return Value(x - y);
    if (op == "*") return Value(x * y);
    if (op == "//") return Value(std::floor(x / y));
    if (op == "%") return Value(x - std::floor(x / y) * y);
  } else {
    const int64_t x = a.asInt(), y = b.asInt();
    if (op == "+") return Value(x + y);
    if (op == "-") return Value(x - y);
    if (op == "*") return Value(x * y);
    if (op == "//") return Value(floorDiv(x, y));
    if (op == "%") return Value(x - floorDiv(x, y) * y);
  }
  scope.fail(line, "unknown operator " + op);
}

bool less(Scope& scope, int line, const Value& a, const Value& b) {
  if (a.isNumber() && b.isNumber()) return a.asFloat() < b.asFloat();
  if (a.isString() && b.isString()) return a.asString() < b.asString();
  scope.fail(line, "cannot order a " + a.kindName() + " and a " + b.kindName());
}

bool contains(Scope& scope, int line, const Value& container, const Value& item) {
  switch (container.kind()) {
    case Value::Kind::kString:
      if (!item.isString())
        scope.fail(line, "'in <string>' needs a string on the left, not a " + item.kindName());
      return container.asString().find(item.asString()) != std::string::npos;
    case Value::Kind::kList:
      for (const Value& element : container.asList())
        if (equal(element, item)) return true;
      return false;
    case Value::Kind::kDict:
      return item.isString() && container.find(item.asString()) != nullptr;
    default:
      requireDefined(scope, line, container);
      scope.fail(line,
                 "'in' needs a string, list or dict on the right, not a " + container.kindName());
  }
}

// Python's slice bounds for a sequence of `size`.
ValueList sliceOf(Scope& scope, int line, const ValueList& items, const Value& start,
                  const Value& stop, const Value& stepValue) {
  const int64_t size = static_cast<int64_t>(items.size());
  const int64_t step = stepValue.isUndefined() || stepValue.isNone() ? 1 : stepValue.asInt();
  if (step == 0) scope.fail(line, "a slice step cannot be zero");
  auto bound = [&](const Value& v, int64_t fallback) {
    if (v.isUndefined() || v.isNone()) return fallback;
    int64_t i = v.asInt();
    if (i < 0) i += size;
    return step > 0 ? std::clamp<int64_t>(i, 0, size) : std::clamp<int64_t>(i, -1, size - 1);
  };
  const int64_t from = bound(start, step > 0 ? 0 : size - 1);
  const int64_t to = bound(stop, step > 0 ? size : -1);
  ValueList out;
  for (int64_t i = from; step > 0 ? i < to : i > to; i += step)
    out.push_back(items[static_cast<size_t>(i)]);
  return out;
}

Value subscriptOf(Scope& scope, int line, const Value& object, const Value& index) {
  requireDefined(scope, line, object);
  if (object.kind() == Value::Kind::kDict) {
    if (index.isString()) {
      if (const Value* found = object.find(index.asString())) return *found;
      return attributeOf(scope, line, object, index.asString());
    }
    return Value::undefined("the dict has no key " + index.repr());
  }
  if (object.kind() == Value::Kind::kList || object.isString()) {
    if (index.kind() != Value::Kind::kInt)
      scope.fail(line, "a " + object.kindName() + " index must be an integer");
    const ValueList items = object.isString() ? object.iterate() : ValueList();
    const ValueList& list = object.isString() ? items : object.asList();
    int64_t i = index.asInt();
    if (i < 0) i += static_cast<int64_t>(list.size());
    if (i < 0 || i >= static_cast<int64_t>(list.size()))
      return Value::undefined("index " + index.repr() + " is out of range");
    return list[static_cast<size_t>(i)];
  }
  if (object.kind() == Value::Kind::kNamespace && index.isString())
    return attributeOf(scope, line, object, index.asString());
  scope.fail(line, "a " + object.kindName() + " cannot be subscripted");
}

Value loopInfo(Scope& scope, const ValueList& items, size_t i) {
  const int64_t n = static_cast<int64_t>(items.size());
  const int64_t k = static_cast<int64_t>(i);
  ValueDict loop = {
      {"index", Value(k + 1)},
      {"index0", Value(k)},
      {"revindex", Value(n - k)},
      {"revindex0", Value(n - k - 1)},
      {"first", Value(i == 0)},
      {"last", Value(k == n - 1)},
      {"length", Value(n)},
      {"depth", Value(scope.loopDepth)},
      {"depth0", Value(scope.loopDepth - 1)},
      {"previtem",
       i > 0 ? items[i - 1] : Value::undefined("loop.previtem is undefined on the first item")},
      {"nextitem",
       k + 1 < n ? items[i + 1] : Value::undefined("loop.nextitem is undefined on the last item")}};
  loop.emplace_back("cycle", Value::callable("loop.cycle", [k](const CallArgs& args) {
                      if (args.positional.empty())
                        throw ConfigError("loop.cycle() needs at least one value");
                      return args.positional[static_cast<size_t>(k) % args.positional.size()];
                    }));
  return Value::dict(std::move(loop));
}

void bindTargets(Scope& scope, int line, const std::vector<std::string>& targets,
                 const Value& item) {
  if (targets.size() == 1) {
    scope.set(targets[0], item);
    return;
  }
  const ValueList parts = item.iterate();
  if (parts.size() != targets.size())
    scope.fail(line, "cannot unpack " + std::to_string(parts.size()) + " values into " +
                         std::to_string(targets.size()) + " loop names");
  for (size_t i = 0; i < targets.size(); ++i) scope.set(targets[i], parts[i]);
}

}  // namespace

Value Scope::lookup(const std::string& name) const {
  for (auto frame = frames_.rbegin(); frame != frames_.rend(); ++frame) {
    auto it = frame->find(name);
    if (it != frame->end()) return it->second;
  }
  return Value::undefined("'" + name + "' is undefined");
}

void Scope::fail(int line, const std::string& what) const {
  throw ConfigError(origin_ + ":" + std::to_string(line) + ": " + what);
}

void requireDefined(Scope& scope, int line, const Value& value) {
  if (value.isUndefined())
    scope.fail(line, value.name().empty() ? "an undefined value is used" : value.name());
}

Value NameRef::eval(Scope& scope) const { return scope.lookup(name); }

Value ListExpr::eval(Scope& scope) const {
  ValueList out;
  for (const auto& item : items) out.push_back(item->eval(scope));
  return tuple ? Value::tuple(std::move(out)) : Value::list(std::move(out));
}

Value DictExpr::eval(Scope& scope) const {
  ValueDict out;
  for (const auto& [keyExpr, valueExpr] : items) {
    const Value key = keyExpr->eval(scope);
    if (!key.isString())
      scope.fail(line, "dict keys must be strings here, not a " + key.kindName());
    Value value = valueExpr->eval(scope);
    auto existing = std::find_if(out.begin(), out.end(),
                                 [&](const auto& e) { return e.first == key.asString(); });
    if (existing != out.end())
      existing->second = std::move(value);
    else
      out.emplace_back(key.asString(), std::move(value));
  }
  return Value::dict(std::move(out));
}

Value Attribute::eval(Scope& scope) const {
  const Value value = object->eval(scope);
  requireDefined(scope, line, value);
  return attributeOf(scope, line, value, name);
}

Value Subscript::eval(Scope& scope) const {
  const Value value = object->eval(scope);
  if (!slice) return subscriptOf(scope, line, value, index->eval(scope));
  requireDefined(scope, line, value);
  auto part = [&](const ExprPtr& e) { return e ? e->eval(scope) : Value::none(); };
  if (value.kind() == Value::Kind::kList)
    return Value::list(sliceOf(scope, line, value.asList(), part(start), part(stop), part(step)));
  if (value.isString()) {
    std::string out;
    for (const Value& c :
         sliceOf(scope, line, value.iterate(), part(start), part(stop), part(step)))
      out += c.asString();
    return Value(out);
  }
  scope.fail(line, "a " + value.kindName() + " cannot be sliced");
}

CallArgs Arguments::eval(Scope& scope) const {
  CallArgs out;
  for (const auto& e : positional) out.positional.push_back(e->eval(scope));
  for (const auto& [name, e] : keywords) out.keywords.emplace_back(name, e->eval(scope));
  return out;
}

Value Call::eval(Scope& scope) const {
  const Value callee = function->eval(scope);
  requireDefined(scope, line, callee);
  if (callee.kind() != Value::Kind::kCallable)
    scope.fail(line, "a " + callee.kindName() + " cannot be called");
  const CallArgs args = arguments.eval(scope);
  try {
    return callee.asCallable()(args);
  } catch (const ConfigError& error) {
    const std::string what = error.what();
    if (what.rfind(scope.origin(), 0) == 0) throw;
    scope.fail(line, callee.name() + "(): " + what);
  }
}

Value FilterExpr::eval(Scope& scope) const {
  return applyFilter(scope, line, name, value->eval(scope), arguments.eval(scope));
}

Value TestExpr::eval(Scope& scope) const {
  const bool result = applyTest(scope, line, name, value->eval(scope), arguments.eval(scope));
  return Value(negated ? !result : result);
}

Value Unary::eval(Scope& scope) const {
  const Value value = operand->eval(scope);
  if (op == "not") return Value(!value.truthy());
  requireDefined(scope, line, value);
  if (!value.isNumber())
    scope.fail(line, "unary " + op + " needs a number, not a " + value.kindName());
  if (op == "+") return value;
  return value.kind() == Value::Kind::kFloat ? Value(-value.asFloat()) : Value(-value.asInt());
}

Value Binary::eval(Scope& scope) const {
  if (op == "and" || op == "or") {
    Value a = left->eval(scope);
    if (a.truthy() == (op == "or")) return a;
    return right->eval(scope);
  }
  const Value a = left->eval(scope);
  const Value b = right->eval(scope);
  if (op == "==") return Value(equal(a, b));
  if (op == "!=") return Value(!equal(a, b));
  if (op == "~") return Value(a.str() + b.str());
  if (op == "in") return Value(contains(scope, line, b, a));
  if (op == "not in") return Value(!contains(scope, line, b, a));
  if (op == "<" || op == ">=" || op == ">" || op == "<=") {
    requireDefined(scope, line, a);
    requireDefined(scope, line, b);
    if (op == "<") return Value(less(scope, line, a, b));
    if (op == ">=") return Value(!less(scope, line, a, b));
    if (op == ">") return Value(less(scope, line, b, a));
    return Value(!less(scope, line, b, a));
  }
  return arithmetic(scope, line, op, a, b);
}

Value Conditional::eval(Scope& scope) const {
  if (condition->eval(scope).truthy()) return then->eval(scope);
  return otherwise ? otherwise->eval(scope)
                   : Value::undefined("the conditional expression has no else");
}

void TextStmt::run(Scope& scope) const { scope.out() += text; }

void OutputStmt::run(Scope& scope) const {
  const Value v = value->eval(scope);
  if (v.kind() == Value::Kind::kCallable)
    scope.fail(line, "writes a function (" + v.name() + "), not a value");
  scope.out() += v.str();
}

void IfStmt::run(Scope& scope) const {
  for (const auto& [condition, body] : branches) {
    if (condition->eval(scope).truthy()) {
      runBody(body, scope);
      return;
    }
  }
  runBody(otherwise, scope);
}

void ForStmt::run(Scope& scope) const {
  const Value source = iterable->eval(scope);
  ValueList items;
  try {
    items = source.iterate();
  } catch (const ConfigError& error) {
    scope.fail(line, error.what());
  }
  if (filter) {
    ValueList kept;
    for (const Value& item : items) {
      scope.pushFrame();
      bindTargets(scope, line, targets, item);
      const bool keep = filter->eval(scope).truthy();
      scope.popFrame();
      if (keep) kept.push_back(item);
    }
    items = std::move(kept);
  }
  if (items.empty()) {
    runBody(otherwise, scope);
    return;
  }
  ++scope.loopDepth;
  for (size_t i = 0; i < items.size(); ++i) {
    scope.pushFrame();
    bindTargets(scope, line, targets, items[i]);
    scope.set("loop", loopInfo(scope, items, i));
    runBody(body, scope);
    scope.popFrame();
    const Scope::LoopControl control = std::exchange(scope.control, Scope::LoopControl::kNone);
    if (control == Scope::LoopControl::kBreak) break;
  }
  --scope.loopDepth;
}

void SetStmt::run(Scope& scope) const {
  Value result;
  if (value) {
    result = value->eval(scope);
  } else {
    std::string buffer;
    std::string* previous = scope.redirect(&buffer);
    runBody(body, scope);
    scope.redirect(previous);
    result = Value(buffer);
  }
  if (attribute.empty()) {
    scope.set(name, std::move(result));
    return;
  }
  const Value target = scope.lookup(name);
  if (target.kind() != Value::Kind::kNamespace)
    scope.fail(line, "'set " + name + "." + attribute + "' needs a namespace, and '" + name +
                         "' is a " + target.kindName());
  ValueDict& entries = target.namespaceItems();
  for (auto& entry : entries)
    if (entry.first == attribute) {
      entry.second = std::move(result);
      return;
    }
  entries.emplace_back(attribute, std::move(result));
}

void LoopControlStmt::run(Scope& scope) const {
  if (scope.loopDepth == 0)
    scope.fail(line, std::string(isBreak ? "break" : "continue") + " outside a loop");
  scope.control = isBreak ? Scope::LoopControl::kBreak : Scope::LoopControl::kContinue;
}

void GenerationStmt::run(Scope& scope) const {
  const size_t begin = scope.out().size();
  runBody(body, scope);
  scope.generationSpans.emplace_back(begin, scope.out().size());
}

}  // namespace strata::train::jinja
