// Schedule generators: each builds the per-rank action lists of a well-known
// pipeline schedule. Every schedule they return passes validate().
//
// All throw ScheduleError naming the values when a size is not positive, and
// interleavedOneFOneB also when microbatches is not a multiple of ranks.
#pragma once

#include "strata/schedule/schedule.h"

namespace strata::schedule {

// All forwards, then all backwards (Huang et al., GPipe). Stashes every
// microbatch: peak activations m per rank.
Schedule gpipe(int ranks, int microbatches);

// One-forward-one-backward (PipeDream-Flush): rank r runs ranks - r - 1
// warm-up forwards then alternates, so it stashes at most ranks - r
// microbatches. Same bubble as GPipe.
Schedule oneFOneB(int ranks, int microbatches);

// Megatron-LM's interleaved 1F1B: each rank runs `virtualStages` model chunks
// (stage c * ranks + r on rank r), which divides the bubble by virtualStages.
// Requires microbatches to be a multiple of ranks.
Schedule interleavedOneFOneB(int ranks, int microbatches, int virtualStages);

// ZB-H1 (Qi et al., Zero Bubble Pipeline Parallelism): backward split into I
// (input gradient, on the critical path) and W (weight gradient, used to fill
// bubbles). With equal F, I and W costs its bubble is a third of 1F1B's, and
// no rank holds more than `ranks` microbatches, 1F1B's peak on rank 0.
Schedule zeroBubbleH1(int ranks, int microbatches);

}  // namespace strata::schedule
