#include <algorithm>

#include "size_checks.h"
#include "strata/schedule/generators.h"
#include "v_rank.h"

namespace strata::schedule {
namespace {

// Every backward is split. Where its I and W follow each other at once, the
// stash stays at 2 * ranks; the cool-down holds Ws back to fill the waits for
// the last input gradients.
void splitBackward(VRank& list, int chunk) {
  list.inputGradient(chunk);
  list.weightGradient(chunk);
}

// Chunk-0 forwards until the first micro-batch has come back up the V to this
// rank's chunk 1, then chunk 1 joins.
void warmUp(VRank& list, int ranks, int rank) {
  for (int i = 0; i < 2 * (ranks - rank) - 1; ++i) list.forward(0);
  for (int i = 0; i < rank; ++i) {
    list.forward(1);
    list.forward(0);
  }
  for (int i = 0; i < ranks - rank; ++i) {
    list.forward(1);
    splitBackward(list, 1);
  }
}

// A forward and a backward of each chunk in turn, laid out for `planned`
// >= 2 * ranks - 1 micro-batches.
void steadyState(VRank& list, int ranks, int rank, int planned) {
  for (int i = 0; i < planned - 2 * ranks + rank + 1; ++i) {
    list.forward(0);
    splitBackward(list, 0);
    list.forward(1);
    splitBackward(list, 1);
  }
  for (int i = 0; i < ranks - rank - 1; ++i) {
    splitBackward(list, 0);
    list.forward(1);
    splitBackward(list, 1);
  }
}

// Input gradients first, as the previous stages wait for them.
void coolDown(VRank& list, int ranks, int rank) {
  for (int i = 0; i < rank; ++i) {
    list.inputGradient(0);
    list.inputGradient(1);
  }
  for (int i = 0; i < ranks - rank; ++i) {
    list.inputGradient(0);
    list.weightGradient(0);
  }
  for (int i = 0; i < rank; ++i) list.weightGradient(1);
  for (int i = 0; i < rank; ++i) list.weightGradient(0);
}

}  // namespace

Schedule zeroBubbleV(int ranks, int microbatches) {
  requirePositive("ranks", ranks);
  requirePositive("microbatches", microbatches);
  Schedule schedule(ranks, microbatches, vPlacement(ranks));
  const int planned = std::max(microbatches, 2 * ranks - 1);
  for (int rank = 0; rank < ranks; ++rank) {
    VRank list(schedule, rank);
    warmUp(list, ranks, rank);
    steadyState(list, ranks, rank, planned);
    coolDown(list, ranks, rank);
  }
  return schedule;
}

}  // namespace strata::schedule
