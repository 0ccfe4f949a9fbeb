#include <algorithm>

#include "size_checks.h"
#include "strata/schedule/generators.h"

namespace strata::schedule {

Schedule zeroBubbleH1(int ranks, int microbatches) {
  requirePositive("ranks", ranks);
  requirePositive("microbatches", microbatches);
  Schedule schedule(ranks, ranks, microbatches);
  for (int rank = 0; rank < ranks; ++rank) {
    const int warmup = std::min(ranks - rank, microbatches);
    int nextWeight = 0;
    const auto add = [&](ActionKind kind, int mb) { schedule.append(rank, {rank, kind, mb}); };
    for (int mb = 0; mb < warmup; ++mb) add(ActionKind::kForward, mb);
    for (int mb = 0; mb < microbatches; ++mb) {
      add(ActionKind::kBackwardInput, mb);
      // Rank r holds back its first r weight gradients: they fill the tail,
      // where the rank would otherwise wait for input gradients travelling
      // up from the last stage. W before F keeps at most `ranks` microbatches
      // stashed.
      if (mb >= rank) add(ActionKind::kBackwardWeight, nextWeight++);
      if (mb + warmup < microbatches) add(ActionKind::kForward, mb + warmup);
    }
    while (nextWeight < microbatches) add(ActionKind::kBackwardWeight, nextWeight++);
  }
  return schedule;
}

}  // namespace strata::schedule
