#include <string>

#include "size_checks.h"
#include "strata/schedule/generators.h"
#include "v_rank.h"

namespace strata::schedule {
namespace {

// The steady state needs every rank to start with both chunks busy.
void requireOnePerStage(int ranks, int microbatches) {
  if (microbatches < 2 * ranks) {
    throw ScheduleError("dualpipe-v needs at least one microbatch per stage (2 x ranks): " +
                        std::to_string(microbatches) + " microbatches on " + std::to_string(ranks) +
                        " ranks");
  }
}

// Warm-up: forwards fill the V, and the first backwards of chunk 1 run
// split with their W at once.
void fillV(VRank& list, int ranks, int rank) {
  for (int i = 0; i < 2 * (ranks - rank - 1); ++i) list.forward(0);
  for (int i = 0; i <= rank; ++i) {
    list.forward(0);
    list.forward(1);
  }
  for (int i = 0; i < ranks - rank - 1; ++i) {
    list.inputGradient(1);
    list.weightGradient(1);
    list.forward(1);
  }
}

// Steady state: every forward runs beside a backward of the other chunk.
void overlapForwardsAndBackwards(VRank& list, int ranks, int rank, int microbatches) {
  for (int i = 0; i < microbatches - 2 * ranks + rank + 1; ++i) {
    // The last rank's first backward waits for the first gradient to come
    // down the V's whole second arm; its forward need not wait with it.
    if (i == 0 && rank == ranks - 1) {
      list.forward(0);
      list.backward(1);
    } else {
      list.overlapped(0, 1);
    }
    list.overlapped(1, 0);
  }
  for (int i = 0; i < ranks - rank - 1; ++i) {
    list.backward(1);
    list.overlapped(1, 0);
  }
}

// Cool-down: the last rank + 1 backwards are split, and their Ws fill the
// waits for the last input gradients.
void drainV(VRank& list, int ranks, int rank) {
  for (int i = 0; i < 2 * (rank + 1); ++i) {
    const int chunk = i % 2 == 0 ? 1 : 0;
    if (i < rank + 1) {
      list.backward(chunk);
    } else {
      list.inputGradient(chunk);
    }
  }
  for (int i = 0; i < ranks - rank - 1; ++i) {
    list.weightGradient();
    list.inputGradient(0);
  }
  for (int i = 0; i <= rank; ++i) list.weightGradient();
}

}  // namespace

Schedule dualPipeV(int ranks, int microbatches) {
  requirePositive("ranks", ranks);
  requirePositive("microbatches", microbatches);
  requireOnePerStage(ranks, microbatches);
  Schedule schedule(ranks, microbatches, vPlacement(ranks));
  for (int rank = 0; rank < ranks; ++rank) {
    VRank list(schedule, rank);
    fillV(list, ranks, rank);
    overlapForwardsAndBackwards(list, ranks, rank, microbatches);
    drainV(list, ranks, rank);
  }
  return schedule;
}

}  // namespace strata::schedule
