#include "strata/data/chat_template.h"

#include <ctime>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <sstream>

#include "data/chat/template_scope.h"
#include "data/chat/template_syntax.h"
#include "strata/error.h"

namespace strata::train {
namespace {

using jinja::CallArgs;
using jinja::Value;

bool hasGeneration(const jinja::Body& body) {
  for (const auto& stmt : body) {
    if (dynamic_cast<const jinja::GenerationStmt*>(stmt.get())) return true;
    if (auto* branch = dynamic_cast<const jinja::IfStmt*>(stmt.get())) {
      for (const auto& entry : branch->branches)
        if (hasGeneration(entry.second)) return true;
      if (hasGeneration(branch->otherwise)) return true;
    }
    if (auto* loop = dynamic_cast<const jinja::ForStmt*>(stmt.get()))
      if (hasGeneration(loop->body) || hasGeneration(loop->otherwise)) return true;
  }
  return false;
}

// The template's message from raise_exception, told apart from Strata's own
// errors as it leaves render().
struct TemplateRaised {
  std::string message;
};

// dict(...) and namespace(...)'s entries: a dict given, then keywords.
jinja::ValueDict entriesOf(const CallArgs& args) {
  jinja::ValueDict entries;
  for (const Value& initial : args.positional)
    if (initial.kind() == Value::Kind::kDict) entries = initial.asDict();
  for (const auto& entry : args.keywords) entries.push_back(entry);
  return entries;
}

// The render's time for strftime_now: `date` at midnight, or now; local
// time, as Python's datetime.now().
std::tm renderTime(const std::string& date, const std::string& origin) {
  std::tm time{};
  if (date.empty()) {
    const std::time_t now = std::time(nullptr);
    localtime_r(&now, &time);
    return time;
  }
  std::istringstream in(date);
  in >> std::get_time(&time, "%Y-%m-%d");
  if (in.fail() || in.peek() != EOF)
    throw ConfigError((origin.empty() ? "" : origin + ": ") + "the chat date '" + date +
                      "' is not YYYY-MM-DD");
  std::tm normalized = time;  // mktime fills the weekday and day of the year
  normalized.tm_isdst = -1;
  std::mktime(&normalized);
  return normalized;
}

void setGlobals(jinja::Scope& scope, const std::tm& time) {
  scope.set("strftime_now", Value::callable("strftime_now", [time](const CallArgs& args) {
              if (args.positional.size() != 1 || !args.positional[0].isString())
                throw ConfigError("strftime_now() takes one format string");
              char text[256];
              const size_t size =
                  std::strftime(text, sizeof text, args.positional[0].asString().c_str(), &time);
              return Value(std::string(text, size));
            }));
  scope.set(
      "raise_exception", Value::callable("raise_exception", [](const CallArgs& args) -> Value {
        throw TemplateRaised{args.positional.empty() ? std::string() : args.positional[0].str()};
      }));
  scope.set("namespace", Value::callable("namespace", [](const CallArgs& args) {
              return Value::makeNamespace(entriesOf(args));
            }));
  scope.set("dict", Value::callable(
                        "dict", [](const CallArgs& args) { return Value::dict(entriesOf(args)); }));
  scope.set("range", Value::callable("range", [](const CallArgs& args) {
              for (const Value& v : args.positional)
                if (v.kind() != Value::Kind::kInt) throw ConfigError("range() takes integers");
              const size_t n = args.positional.size();
              if (n < 1 || n > 3) throw ConfigError("range() takes 1 to 3 arguments");
              const int64_t start = n == 1 ? 0 : args.positional[0].asInt();
              const int64_t stop = n == 1 ? args.positional[0].asInt() : args.positional[1].asInt();
              const int64_t step = n == 3 ? args.positional[2].asInt() : 1;
              if (step == 0) throw ConfigError("range() step must not be zero");
              jinja::ValueList out;
              for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) {
                out.emplace_back(i);
                if (out.size() > 1000000)
                  throw ConfigError("range() of more than a million numbers");
              }
              return Value::list(std::move(out));
            }));
}

}  // namespace

void checkChatDate(const std::string& date) { renderTime(date, ""); }

ChatTemplate::ChatTemplate(const std::string& source, std::string origin)
    : origin_(std::move(origin)),
      body_(jinja::parseTemplate(source, origin_)),
      marksGeneration_(hasGeneration(body_)) {}

ChatTemplate::~ChatTemplate() = default;
ChatTemplate::ChatTemplate(ChatTemplate&&) noexcept = default;

ChatTemplate::Output ChatTemplate::render(const nlohmann::ordered_json& variables,
                                          const std::string& date) const {
  if (!variables.is_object())
    throw ConfigError(origin_ + ": the template's variables must be a JSON object");
  Output output;
  jinja::Scope scope(origin_, output.text);
  setGlobals(scope, renderTime(date, origin_));
  for (const auto& [name, value] : variables.items()) scope.set(name, Value::fromJson(value));
  try {
    for (const auto& stmt : body_) stmt->run(scope);
  } catch (const TemplateRaised& raised) {
    throw ConfigError(origin_ + ": the template refused the conversation: " + raised.message);
  }
  output.generation = std::move(scope.generationSpans);
  return output;
}

}  // namespace strata::train
