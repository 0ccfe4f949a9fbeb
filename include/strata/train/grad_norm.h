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
//   - data-parallel replicas hold the same (averaged) gradients: not summed.
//   ||g|| = sqrt( sum_pp sum_tp sum_{owned p} ||g_p||^2 )
//
// Blocks in one all-reduce over tp and one over pp (each bounded by its
// communicator's timeout); every rank returns the same norm.
#pragma once

#include <ATen/core/Tensor.h>

#include <vector>

#include "strata/runtime/communicator.h"

namespace strata::train {

struct NormTerm {
  at::Tensor parameter;
  bool countHere = true;  // false for a replica counted on another rank
};

double globalGradNorm(const std::vector<NormTerm>& terms, Communicator& tp, Communicator& pp);

// Scales every gradient by min(1, maxNorm / (norm + 1e-6)); returns the norm
// before clipping. maxNorm <= 0 only measures.
double clipGradNorm(const std::vector<NormTerm>& terms, double maxNorm, Communicator& tp,
                    Communicator& pp);

}  // namespace strata::train
