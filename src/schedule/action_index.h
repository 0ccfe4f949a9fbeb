// Where each action of a schedule sits, and which actions it consumes. Shared
// by the validator and the simulator so both read the same dependencies.
#pragma once

#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "strata/schedule/schedule.h"

namespace strata::schedule {

struct Slot {
  int rank = 0;
  int step = 0;
};

class ActionIndex {
 public:
  explicit ActionIndex(const Schedule& schedule);

  std::optional<Slot> find(const Action& action) const;
  bool contains(const Action& action) const { return find(action).has_value(); }
  // Every repeat of an action, paired with its first occurrence.
  const std::vector<std::pair<Slot, Slot>>& duplicates() const { return duplicates_; }

 private:
  std::map<Action, Slot> slots_;
  std::vector<std::pair<Slot, Slot>> duplicates_;
};

// The actions whose results `action` needs: the previous stage's forward, the
// stage's own forward, the next stage's input gradient (from its B or its I),
// or the stage's own I for a W. Assumes the action's stage is in range.
std::vector<Action> inputsOf(const Action& action, const Schedule& schedule,
                             const ActionIndex& index);

// The slots a rank issues at once from `first`: that slot and, when it starts
// an overlapped pair, its partner.
std::vector<Slot> issuedTogether(const Schedule& schedule, const Slot& first);

// Runs every rank's list in order under blocking point-to-point semantics: an
// action runs once all its inputs have run, and an overlapped pair once the
// inputs of both have run, as a runner that issues them together must wait.
// Stops when every rank is done or none can progress.
struct BlockingRun {
  std::vector<Slot> order;  // the actions that ran, in an order that respects every input
  std::vector<int> next;    // per rank, the step of the first action that did not run

  bool hasRun(const Slot& slot) const { return slot.step < next[slot.rank]; }
  bool finished(const Schedule& schedule) const;
};

BlockingRun runBlocking(const Schedule& schedule, const ActionIndex& index);

}  // namespace strata::schedule
