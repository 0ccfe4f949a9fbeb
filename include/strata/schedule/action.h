// One unit of pipeline work: run `kind` of `stage` on `microbatch`.
//
// The text form is stage, kind letter, microbatch: `0F3`, `1B2`, `1I0`, `1W0`.
// parseAction throws ScheduleError naming the token when it is malformed;
// printing never throws.
#pragma once

#include <string>

namespace strata::schedule {

enum class ActionKind : char {
  kForward = 'F',
  kBackward = 'B',        // full backward: input and weight gradients together
  kBackwardInput = 'I',   // gradient with respect to the stage input only
  kBackwardWeight = 'W',  // gradient with respect to the stage weights only
};

struct Action {
  int stage = 0;
  ActionKind kind = ActionKind::kForward;
  int microbatch = 0;
};

bool operator==(const Action& a, const Action& b);
bool operator!=(const Action& a, const Action& b);
// Orders by stage, then microbatch, then kind; lets actions key ordered maps.
bool operator<(const Action& a, const Action& b);

char kindLetter(ActionKind kind);
// Throws ScheduleError for a letter other than F, B, I or W.
ActionKind kindFromLetter(char letter);

std::string toString(const Action& action);
// Parses `0F3`-style tokens. Throws ScheduleError naming the token.
Action parseAction(const std::string& token);

}  // namespace strata::schedule
