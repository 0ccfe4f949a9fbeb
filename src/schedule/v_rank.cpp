#include "v_rank.h"

#include <algorithm>

namespace strata::schedule {

VRank::VRank(Schedule& schedule, int rank)
    : schedule_(schedule), rank_(rank), stages_{rank, schedule.stages() - 1 - rank} {}

void VRank::forward(int chunk) { add(nextForward(chunk)); }

void VRank::backward(int chunk) { add(nextBackward(chunk, ActionKind::kBackward)); }

void VRank::inputGradient(int chunk) {
  const Action input = nextBackward(chunk, ActionKind::kBackwardInput);
  waiting_.push_back({input.stage, ActionKind::kBackwardWeight, input.microbatch});
  add(input);
}

void VRank::weightGradient(int chunk) {
  const auto it = std::find_if(waiting_.begin(), waiting_.end(),
                               [&](const Action& w) { return w.stage == stages_[chunk]; });
  const Action weight = *it;
  waiting_.erase(it);
  add(weight);
}

void VRank::weightGradient() {
  const Action weight = waiting_.front();
  waiting_.pop_front();
  add(weight);
}

// Only DualPipeV overlaps, and it lays its passes out for exactly its
// micro-batches, so no pair loses an action to the rule of add().
void VRank::overlapped(int forwardChunk, int backwardChunk) {
  schedule_.appendOverlapped(rank_, nextForward(forwardChunk),
                             nextBackward(backwardChunk, ActionKind::kBackward));
}

Action VRank::nextForward(int chunk) {
  return {stages_[chunk], ActionKind::kForward, forwards_[chunk]++};
}

Action VRank::nextBackward(int chunk, ActionKind kind) {
  return {stages_[chunk], kind, backwards_[chunk]++};
}

// ZB-V lays its passes out for at least 2p - 1 micro-batches; with fewer, the
// missing ones are left out. A micro-batch's actions depend only on each
// other, so what remains of every rank's order still runs.
void VRank::add(const Action& action) {
  if (action.microbatch < schedule_.microbatches()) schedule_.append(rank_, action);
}

}  // namespace strata::schedule
