#include <algorithm>

#include "size_checks.h"
#include "strata/schedule/generators.h"

namespace strata::schedule {

Schedule oneFOneB(int ranks, int microbatches) {
  requirePositive("ranks", ranks);
  requirePositive("microbatches", microbatches);
  Schedule schedule(ranks, ranks, microbatches);
  for (int rank = 0; rank < ranks; ++rank) {
    // Warm-up fills the pipe just enough that the first backward arrives as
    // the rank finishes its next forward.
    const int warmup = std::min(ranks - rank - 1, microbatches);
    const auto forward = [&](int mb) { schedule.append(rank, {rank, ActionKind::kForward, mb}); };
    const auto backward = [&](int mb) { schedule.append(rank, {rank, ActionKind::kBackward, mb}); };
    for (int mb = 0; mb < warmup; ++mb) forward(mb);
    for (int mb = 0; mb < microbatches - warmup; ++mb) {
      forward(warmup + mb);
      backward(mb);
    }
    for (int mb = microbatches - warmup; mb < microbatches; ++mb) backward(mb);
  }
  return schedule;
}

}  // namespace strata::schedule
