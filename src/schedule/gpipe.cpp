#include "size_checks.h"
#include "strata/schedule/generators.h"

namespace strata::schedule {

Schedule gpipe(int ranks, int microbatches) {
  requirePositive("ranks", ranks);
  requirePositive("microbatches", microbatches);
  Schedule schedule(ranks, ranks, microbatches);
  for (int rank = 0; rank < ranks; ++rank) {
    for (int mb = 0; mb < microbatches; ++mb) {
      schedule.append(rank, {rank, ActionKind::kForward, mb});
    }
    for (int mb = 0; mb < microbatches; ++mb) {
      schedule.append(rank, {rank, ActionKind::kBackward, mb});
    }
  }
  return schedule;
}

}  // namespace strata::schedule
