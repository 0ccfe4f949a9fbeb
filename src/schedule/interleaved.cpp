#include <algorithm>

#include "size_checks.h"
#include "strata/schedule/generators.h"

namespace strata::schedule {
namespace {

// Megatron's order: a rank works through its chunks in groups of `ranks`
// microbatches, forwards from the first chunk to the last and backwards from
// the last chunk to the first.
class ChunkOrder {
 public:
  ChunkOrder(int ranks, int virtualStages) : ranks_(ranks), virtualStages_(virtualStages) {}

  Action forward(int rank, int step) const {
    return {chunkOf(step) * ranks_ + rank, ActionKind::kForward, microbatchOf(step)};
  }
  Action backward(int rank, int step) const {
    const int chunk = virtualStages_ - 1 - chunkOf(step);
    return {chunk * ranks_ + rank, ActionKind::kBackward, microbatchOf(step)};
  }

 private:
  int chunkOf(int step) const { return (step / ranks_) % virtualStages_; }
  int microbatchOf(int step) const {
    return (step / (ranks_ * virtualStages_)) * ranks_ + step % ranks_;
  }

  int ranks_, virtualStages_;
};

void requireWholeGroups(int ranks, int microbatches, int virtualStages) {
  if (microbatches % ranks != 0) {
    throw ScheduleError("interleaved-1f1b needs microbatches to be a multiple of ranks: " +
                        std::to_string(microbatches) + " microbatches on " + std::to_string(ranks) +
                        " ranks (virtual stages " + std::to_string(virtualStages) + ")");
  }
}

}  // namespace

Schedule interleavedOneFOneB(int ranks, int microbatches, int virtualStages) {
  requirePositive("ranks", ranks);
  requirePositive("microbatches", microbatches);
  requirePositive("virtual stages", virtualStages);
  requireWholeGroups(ranks, microbatches, virtualStages);
  Schedule schedule(ranks, ranks * virtualStages, microbatches);
  const ChunkOrder order(ranks, virtualStages);
  const int steps = microbatches * virtualStages;
  for (int rank = 0; rank < ranks; ++rank) {
    // With a single group of microbatches there is no steady state to reach:
    // every forward goes first, as Megatron does.
    const int warmup = microbatches == ranks
                           ? steps
                           : std::min((ranks - rank - 1) * 2 + (virtualStages - 1) * ranks, steps);
    for (int step = 0; step < warmup; ++step) schedule.append(rank, order.forward(rank, step));
    for (int step = 0; step < steps - warmup; ++step) {
      schedule.append(rank, order.forward(rank, warmup + step));
      schedule.append(rank, order.backward(rank, step));
    }
    for (int step = steps - warmup; step < steps; ++step) {
      schedule.append(rank, order.backward(rank, step));
    }
  }
  return schedule;
}

}  // namespace strata::schedule
