// What a chat template renders with: its variables in nested frames (one a
// loop iteration, as Jinja scopes `set` inside a loop to the loop), the
// output so far, the spans {% generation %} marked, and a pending break or
// continue. One Scope per render; not shared between threads.
#pragma once

#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "data/chat/template_value.h"

namespace strata::train::jinja {

class Scope {
 public:
  enum class LoopControl { kNone, kBreak, kContinue };

  Scope(const std::string& origin, std::string& out) : origin_(origin), out_(&out) {
    frames_.emplace_back();
  }

  // The innermost frame's value of `name`, or an undefined value naming it.
  Value lookup(const std::string& name) const;
  void set(const std::string& name, Value value) { frames_.back()[name] = std::move(value); }
  void pushFrame() { frames_.emplace_back(); }
  void popFrame() { frames_.pop_back(); }

  std::string& out() { return *out_; }
  // Renders into `buffer` until the returned previous output is restored.
  std::string* redirect(std::string* buffer) { return std::exchange(out_, buffer); }

  LoopControl control = LoopControl::kNone;
  std::vector<std::pair<size_t, size_t>> generationSpans;  // byte ranges of the output
  int loopDepth = 0;

  // Throws ConfigError "<origin>:<line>: <what>".
  [[noreturn]] void fail(int line, const std::string& what) const;
  const std::string& origin() const { return origin_; }

 private:
  const std::string& origin_;
  std::string* out_;
  std::vector<std::unordered_map<std::string, Value>> frames_;
};

// Jinja's filters, tests and the methods of strings and dicts, by name.
// Each throws ConfigError through scope.fail(line, ...) for an unknown name
// or arguments of the wrong kind.
Value applyFilter(Scope& scope, int line, const std::string& name, const Value& value,
                  const CallArgs& args);
bool applyTest(Scope& scope, int line, const std::string& name, const Value& value,
               const CallArgs& args);
// `value.name`: a dict's entry or method, a namespace's entry, a string's
// method; undefined when there is none.
Value attributeOf(Scope& scope, int line, const Value& value, const std::string& name);
// Throws naming the undefined value's name when `value` is undefined.
void requireDefined(Scope& scope, int line, const Value& value);

}  // namespace strata::train::jinja
