// Schedule generators: each builds the per-rank action lists of a well-known
// pipeline schedule. Every schedule they return passes validate().
//
// All throw ScheduleError naming the values when a size is not positive;
// interleavedOneFOneB also when microbatches is not a multiple of ranks, and
// dualPipeV when microbatches is under 2 * ranks.
//
// Stash figures count one microbatch's activations of one stage (stash.h);
// bubble figures take F = I = W = 1 per stage (B = 2) and no latency.
// docs/schedules.md compares the schedules in these terms.
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

// ZB-V (Qi et al., Zero Bubble Pipeline Parallelism, and Pipeline Parallelism
// with Controllable Memory): 2 * ranks stages in the V of vPlacement, every
// backward split into I and W. Every rank idles max(p - 1, 4p - 2m - 2), and
// rank r's peak stash is min(2p, 2m, m + r + 1): for m >= 2p - 1 that is 2p
// on every rank, of stages half the size of 1F1B's, so 1F1B's peak on rank 0.
// 4m(p - 1) messages, twice 1F1B's 2m(p - 1). Takes any m >= 1.
Schedule zeroBubbleV(int ranks, int microbatches);

// DualPipeV (DeepSeek's DualPipe folded onto half the ranks): ZB-V's V, with
// the steady state issuing each forward together with a full backward of the
// other chunk (Schedule::appendOverlapped). Under CostModel::overlap o, rank r
// idles (1 - o) * 2(p - 1) + o * min(r + 1, p - 1); every rank's peak stash
// is 2p + 1, one more than ZB-V's; 4m(p - 1) messages. Needs m >= 2p.
Schedule dualPipeV(int ranks, int microbatches);

}  // namespace strata::schedule
