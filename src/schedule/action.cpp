#include "strata/schedule/action.h"

#include <cctype>
#include <optional>
#include <string_view>
#include <tuple>

#include "strata/schedule/error.h"
#include "strata/util/parse_number.h"

namespace strata::schedule {
namespace {

// Reads the digits starting at `pos` (no sign: "0F-1" is no action) and
// moves `pos` past them; returns false if there are none or they overflow an int.
bool readNumber(const std::string& text, std::size_t& pos, int& value) {
  const std::size_t begin = pos;
  while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos]))) ++pos;
  std::optional<int> number = parseInt(std::string_view(text).substr(begin, pos - begin));
  if (number) value = *number;
  return number.has_value();
}

[[noreturn]] void badToken(const std::string& token) {
  throw ScheduleError("bad action '" + token +
                      "': expected <stage><kind><microbatch> with kind F, B, I or W, e.g. 0F3");
}

}  // namespace

bool operator==(const Action& a, const Action& b) {
  return a.stage == b.stage && a.kind == b.kind && a.microbatch == b.microbatch;
}

bool operator!=(const Action& a, const Action& b) { return !(a == b); }

bool operator<(const Action& a, const Action& b) {
  return std::make_tuple(a.stage, a.microbatch, a.kind) <
         std::make_tuple(b.stage, b.microbatch, b.kind);
}

char kindLetter(ActionKind kind) { return static_cast<char>(kind); }

ActionKind kindFromLetter(char letter) {
  switch (letter) {
    case 'F':
      return ActionKind::kForward;
    case 'B':
      return ActionKind::kBackward;
    case 'I':
      return ActionKind::kBackwardInput;
    case 'W':
      return ActionKind::kBackwardWeight;
  }
  throw ScheduleError(std::string("unknown action kind '") + letter + "': expected F, B, I or W");
}

std::string toString(const Action& action) {
  return std::to_string(action.stage) + kindLetter(action.kind) + std::to_string(action.microbatch);
}

Action parseAction(const std::string& token) {
  Action action;
  std::size_t pos = 0;
  if (!readNumber(token, pos, action.stage) || pos >= token.size()) badToken(token);
  const char letter = token[pos++];
  if (letter != 'F' && letter != 'B' && letter != 'I' && letter != 'W') badToken(token);
  action.kind = kindFromLetter(letter);
  if (!readNumber(token, pos, action.microbatch) || pos != token.size()) badToken(token);
  return action;
}

}  // namespace strata::schedule
