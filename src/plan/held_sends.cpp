#include "held_sends.h"

#include <algorithm>

namespace strata::plan {
namespace {

using schedule::Action;
using schedule::ActionKind;

constexpr int kActivation = 0, kGradient = 1;

bool takesGradient(ActionKind kind) {
  return kind == ActionKind::kBackward || kind == ActionKind::kBackwardInput;
}

}  // namespace

HeldSends::HeldSends(const schedule::Schedule& pipeline, int rank)
    : pipeline_(pipeline), rank_(rank) {
  int last = pipeline.stages() - 1;
  for (int receiver = 0; receiver < pipeline.ranks(); ++receiver) {
    if (receiver == rank) continue;
    std::vector<Message>& order = takenOrder_[receiver];
    for (const Action& a : pipeline.actions(receiver)) {
      int from = -1, flow = kActivation;
      if (a.kind == ActionKind::kForward && a.stage > 0) {
        from = a.stage - 1;
      } else if (takesGradient(a.kind) && a.stage < last) {
        from = a.stage + 1;
        flow = kGradient;
      }
      if (from < 0 || pipeline.rankOf(from) != rank) continue;
      placeInOrder_[Message{from, a.microbatch, flow}] = static_cast<int>(order.size());
      order.push_back(Message{from, a.microbatch, flow});
    }
  }
}

void HeldSends::afterAction(const Action& action, bool stashed) {
  int s = action.stage, last = pipeline_.stages() - 1;
  int to = -1, flow = kActivation;
  if (action.kind == ActionKind::kForward && s < last) {
    to = s + 1;
  } else if (takesGradient(action.kind) && s > 0) {
    to = s - 1;
    flow = kGradient;
  }
  if (to < 0 || pipeline_.rankOf(to) == rank_) return;
  letGoOfDelivered();
  Message message{s, action.microbatch, flow};
  int receiver = pipeline_.rankOf(to);
  isSent_[message] = true;
  const std::vector<Message>& order = takenOrder_[receiver];
  int& prefix = sentPrefix_[receiver];
  while (prefix < static_cast<int>(order.size()) && isSent_[order[prefix]]) ++prefix;
  held_.push_back(Sent{message, receiver, stashed && flow == kActivation});
}

void HeldSends::stashGone(int stage, int microbatch) {
  for (Sent& sent : held_) {
    if (sent.message == Message{stage, microbatch, kActivation}) sent.stashed = false;
  }
}

int HeldSends::held() const {
  return static_cast<int>(
      std::count_if(held_.begin(), held_.end(), [](const Sent& sent) { return !sent.stashed; }));
}

bool HeldSends::delivered(const Sent& sent) const {
  return placeInOrder_.at(sent.message) < sentPrefix_.at(sent.receiver);
}

void HeldSends::letGoOfDelivered() {
  while (!held_.empty() && delivered(held_.front())) held_.pop_front();
}

}  // namespace strata::plan
