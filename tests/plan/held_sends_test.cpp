// Which sent hand-offs the planner counts as still held, action by action.
#include "held_sends.h"

#include <gtest/gtest.h>

#include <vector>

#include "strata/schedule/generators.h"

namespace strata::plan {
namespace {

// held() after each of `rank`'s actions, its outputs counted as sent alone.
std::vector<int> heldAfterEachAction(const schedule::Schedule& pipeline, int rank) {
  HeldSends sends(pipeline, rank);
  std::vector<int> held;
  for (const schedule::Action& action : pipeline.actions(rank)) {
    sends.afterAction(action, /*stashed=*/false);
    held.push_back(sends.held());
  }
  return held;
}

// 1F1B over two ranks: the last stage takes the activations in the order
// they are sent, so each send lets go of the one before it.
TEST(HeldSends, InOrderMessagesGoAtTheNextSend) {
  schedule::Schedule pipeline = schedule::oneFOneB(2, 4);
  // rank 0: F0 F1 B0 F2 B1 F3 B2 B3
  EXPECT_EQ(heldAfterEachAction(pipeline, 0), (std::vector<int>{1, 1, 1, 1, 1, 1, 1, 1}));
  // rank 1: F0 B0 F1 B1 F2 B2 F3 B3, a gradient sent at each B
  EXPECT_EQ(heldAfterEachAction(pipeline, 1), (std::vector<int>{0, 1, 1, 1, 1, 1, 1, 1}));
}

// ZB-V over two ranks: rank 1 takes rank 0's gradient from 3I0 before the
// activation of 0F2, which rank 0 sent first; that activation stays held
// until 3I0 is sent, and 3I0 until rank 0 sends again.
TEST(HeldSends, AMessageTakenAfterALaterSendWaitsForIt) {
  schedule::Schedule pipeline = schedule::zeroBubbleV(2, 4);
  // rank 0: 0F0 0F1 0F2 3F0 3I0 3W0 3F1 3I1 ...
  std::vector<int> held = heldAfterEachAction(pipeline, 0);
  EXPECT_EQ(std::vector<int>(held.begin(), held.begin() + 8),
            (std::vector<int>{1, 1, 1, 1, 2, 2, 2, 1}));
}

// An output its stash holds costs its send nothing until the stash goes.
TEST(HeldSends, AStashedOutputCountsOnceItsStashIsGone) {
  schedule::Schedule pipeline = schedule::oneFOneB(2, 2);
  HeldSends sends(pipeline, 0);
  sends.afterAction({0, schedule::ActionKind::kForward, 0}, /*stashed=*/true);
  EXPECT_EQ(sends.held(), 0);
  sends.stashGone(0, 0);
  EXPECT_EQ(sends.held(), 1);
}

}  // namespace
}  // namespace strata::plan
