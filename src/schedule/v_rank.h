// One rank's list of a V schedule (zb-v, dualpipe-v), written as passes over
// the rank's two chunks of the V placement (vPlacement): chunk 0 is stage r,
// on the V's way down, and chunk 1 is stage 2p - 1 - r, on its way back up.
// Each chunk keeps the next micro-batch of each pass, so a generator says only
// which pass of which chunk comes next, and the micro-batches follow.
#pragma once

#include <deque>

#include "strata/schedule/schedule.h"

namespace strata::schedule {

class VRank {
 public:
  VRank(Schedule& schedule, int rank);

  void forward(int chunk);
  void backward(int chunk);
  // I; its W waits until a weightGradient call takes it.
  void inputGradient(int chunk);
  // The W of the oldest waiting I of `chunk`, or of either chunk.
  void weightGradient(int chunk);
  void weightGradient();
  // The next F of `forwardChunk` and the next B of `backwardChunk`, issued
  // together as an overlapped pair.
  void overlapped(int forwardChunk, int backwardChunk);

 private:
  Action nextForward(int chunk);
  Action nextBackward(int chunk, ActionKind kind);
  void add(const Action& action);

  Schedule& schedule_;
  int rank_;
  int stages_[2];
  int forwards_[2] = {0, 0};
  int backwards_[2] = {0, 0};   // B and I together: each micro-batch has one or the other
  std::deque<Action> waiting_;  // the W of every I added, until it is added itself
};

}  // namespace strata::schedule
