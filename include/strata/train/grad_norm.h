// The true global gradient norm of a model spread over pp x dp x tp, and
// clipping by it.
//
// Each parameter counts once in the whole job:
//   - tensor-parallel shards: every tp rank holds a different slice, so the
//     squares are summed over tp;
//   - parameters replicated over tp (LayerNorm, row-parallel bias): counted on
//     tp rank 0 only;
//   - pipeline stages hold disjoint layers, so squares are summed over pp, but
//     a tied embedding held by the first and the last stage counts once;
//   - data-parallel replicas hold the same (averaged) gradients: not summed,
//     except under ZeRO-2, where each replica holds only its chunks of the
//     averaged gradient and the chunks' squares are summed over dp.
//   - routed experts under expert parallelism: each ep rank holds other
//     experts, so their squares are summed over ep (under ZeRO-2 their
//     chunks, cut over the expert replicas, are summed over dp with the rest).
//   ||g|| = sqrt( sum_pp sum_tp [ sum_{owned p} ||g_p||^2 + sum_dp ||chunks||^2
//                                 + sum_ep sum_{experts} ||g_e||^2 ] )
//
// Blocks in one all-reduce over tp and one over pp, with ep one over ep, and
// under ZeRO-2 one over dp (each bounded by its communicator's timeout); every rank returns the
// same norm. A nan or inf in any gradient of any rank, counted or not, makes
// it non-finite on every rank.
#pragma once

#include <ATen/core/Tensor.h>

#include <vector>

#include "strata/runtime/communicator.h"

namespace strata::train {

struct NormTerm {
  at::Tensor parameter;
  bool countHere = true;  // false for a replica counted on another rank
};

// A stretch of a sharded chunk, in elements from the chunk's start, and
// whether it counts on this rank by the rules above.
struct ChunkRun {
  int64_t offset = 0;
  int64_t numel = 0;
  bool counted = true;
};

// One ZeRO-2/3 chunk of averaged gradient ([chunk], scaled in place by
// clipping) cut into the runs that cover it, in order. At tp 1 with nothing
// tied across stages the whole chunk is one counted run, and measuring it
// copies nothing.
struct ShardedNormTerm {
  at::Tensor gradient;
  std::vector<ChunkRun> runs;
};

// Elements [offset, offset + numel) of a flat gradient buffer: a
// parameter's slot in a bucket layout.
struct FlatSpan {
  int64_t offset = 0;
  int64_t numel = 0;
};

// The term for `chunk`, elements [chunkStart, chunkStart + chunk.numel()) of
// a flat buffer in which `notCounted` (any order, disjoint) are the slots of
// parameters counted on another rank. Everything else counts here, padding
// included (its gradient is zero), so that a chunk with no such slot is one
// run.
ShardedNormTerm shardedNormTerm(at::Tensor chunk, int64_t chunkStart,
                                std::vector<FlatSpan> notCounted);

// The gradients to measure: whole ones (`terms`, the same on every dp rank)
// and dp-sharded chunks (`sharded`: empty on every rank of a dp group, or on
// none); under expert parallelism the routed experts' whole gradients, which
// differ between the ranks of an ep group and are summed over it.
struct GradientTerms {
  std::vector<NormTerm> terms;
  std::vector<ShardedNormTerm> sharded;
  std::vector<NormTerm> expertTerms;
};

struct NormGroups {
  Communicator& dp;
  Communicator& tp;
  Communicator& pp;
  Communicator* ep = nullptr;  // set on every rank of a job with ep > 1
};

double globalGradNorm(const GradientTerms& gradients, const NormGroups& groups);

// Clipping's factor for a measured norm: min(1, maxNorm / (norm + 1e-6)), 1
// when maxNorm <= 0 (no clipping), nan when the norm is.
double clipScale(double norm, double maxNorm);

// Multiplies every gradient (counted or not) by `scale` in place.
void scaleGradients(const GradientTerms& gradients, double scale);

// Scales every gradient by clipScale(norm, maxNorm); returns the norm before
// clipping. maxNorm <= 0 only measures.
double clipGradNorm(const GradientTerms& gradients, double maxNorm, const NormGroups& groups);

}  // namespace strata::train
