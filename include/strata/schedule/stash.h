// Activation stash accounting: how many microbatches' activations each rank
// and each stage keeps alive at its worst moment.
//
// An F stashes one microbatch on its stage. A B frees it. With the backward
// split, I does not free it and W does: following the zero-bubble paper, the
// weight gradient needs the stage's stashed input, so the activation stays
// until W. An overlapped pair (F then B, schedule.h) is counted in list order,
// so its forward's new activation and its backward's old one are both held,
// as they are while the two run together. These peaks depend only on each
// rank's order, not on timing. The unit is one microbatch's activations of
// one stage: with two stages per rank (zb-v, dualpipe-v) a stage is half as
// large as under 1F1B on the same ranks.
// Never throws for a schedule that passed validate().
#pragma once

#include <vector>

#include "strata/schedule/schedule.h"

namespace strata::schedule {

struct StashPeaks {
  std::vector<int> perRank;  // over all the rank's stages together
  std::vector<int> perStage;
};

StashPeaks peakStash(const Schedule& schedule);

}  // namespace strata::schedule
