#include "strata/schedule/stash.h"

#include <algorithm>

namespace strata::schedule {
namespace {

int stashChange(ActionKind kind) {
  switch (kind) {
    case ActionKind::kForward:
      return 1;
    case ActionKind::kBackward:
    case ActionKind::kBackwardWeight:
      return -1;
    case ActionKind::kBackwardInput:
      return 0;
  }
  return 0;
}

}  // namespace

StashPeaks peakStash(const Schedule& schedule) {
  StashPeaks peaks;
  peaks.perRank.assign(schedule.ranks(), 0);
  peaks.perStage.assign(schedule.stages(), 0);
  std::vector<int> stageLive(schedule.stages(), 0);
  for (int rank = 0; rank < schedule.ranks(); ++rank) {
    int rankLive = 0;
    for (const Action& action : schedule.actions(rank)) {
      const int change = stashChange(action.kind);
      rankLive += change;
      stageLive[action.stage] += change;
      peaks.perRank[rank] = std::max(peaks.perRank[rank], rankLive);
      peaks.perStage[action.stage] =
          std::max(peaks.perStage[action.stage], stageLive[action.stage]);
    }
  }
  return peaks;
}

}  // namespace strata::schedule
