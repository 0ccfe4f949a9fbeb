#include "action_index.h"

namespace strata::schedule {

ActionIndex::ActionIndex(const Schedule& schedule) {
  for (int rank = 0; rank < schedule.ranks(); ++rank) {
    const auto& actions = schedule.actions(rank);
    for (int step = 0; step < static_cast<int>(actions.size()); ++step) {
      const Slot slot{rank, step};
      const auto [it, inserted] = slots_.emplace(actions[step], slot);
      if (!inserted) duplicates_.emplace_back(slot, it->second);
    }
  }
}

std::optional<Slot> ActionIndex::find(const Action& action) const {
  const auto it = slots_.find(action);
  if (it == slots_.end()) return std::nullopt;
  return it->second;
}

std::vector<Action> inputsOf(const Action& action, const Schedule& schedule,
                             const ActionIndex& index) {
  const int stage = action.stage;
  const int mb = action.microbatch;
  switch (action.kind) {
    case ActionKind::kForward:
      if (stage == 0) return {};
      return {{stage - 1, ActionKind::kForward, mb}};
    case ActionKind::kBackward:
    case ActionKind::kBackwardInput: {
      std::vector<Action> inputs{{stage, ActionKind::kForward, mb}};
      if (stage + 1 < schedule.stages()) {
        const Action splitGradient{stage + 1, ActionKind::kBackwardInput, mb};
        inputs.push_back(index.contains(splitGradient)
                             ? splitGradient
                             : Action{stage + 1, ActionKind::kBackward, mb});
      }
      return inputs;
    }
    case ActionKind::kBackwardWeight:
      return {{stage, ActionKind::kBackwardInput, mb}};
  }
  return {};
}

std::vector<Slot> issuedTogether(const Schedule& schedule, const Slot& first) {
  if (!schedule.overlapsNext(first.rank, first.step)) return {first};
  return {first, {first.rank, first.step + 1}};
}

bool BlockingRun::finished(const Schedule& schedule) const {
  for (int rank = 0; rank < schedule.ranks(); ++rank) {
    if (next[rank] < static_cast<int>(schedule.actions(rank).size())) return false;
  }
  return true;
}

namespace {

bool inputsReady(const std::vector<Slot>& issued, const Schedule& schedule,
                 const ActionIndex& index, const BlockingRun& run) {
  for (const Slot& consumer : issued) {
    const Action& action = schedule.actions(consumer.rank)[consumer.step];
    for (const Action& input : inputsOf(action, schedule, index)) {
      const std::optional<Slot> slot = index.find(input);
      if (!slot || !run.hasRun(*slot)) return false;
    }
  }
  return true;
}

}  // namespace

BlockingRun runBlocking(const Schedule& schedule, const ActionIndex& index) {
  BlockingRun run;
  run.next.assign(schedule.ranks(), 0);
  for (bool progressed = true; progressed;) {
    progressed = false;
    for (int rank = 0; rank < schedule.ranks(); ++rank) {
      const int steps = static_cast<int>(schedule.actions(rank).size());
      int& step = run.next[rank];
      while (step < steps) {
        const std::vector<Slot> issued = issuedTogether(schedule, {rank, step});
        if (!inputsReady(issued, schedule, index, run)) break;
        run.order.insert(run.order.end(), issued.begin(), issued.end());
        step += static_cast<int>(issued.size());
        progressed = true;
      }
    }
  }
  return run;
}

}  // namespace strata::schedule
