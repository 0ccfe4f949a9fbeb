// The routing terms of the trained loss (moe_options.h has the formulas):
// the sequence-wise load-balance loss and the router z-loss, unscaled by
// their coefficients.
//
// Tokens are rows t = i b + j of [s, b] (sequence j = t mod b). Under
// context parallelism a rank holds s of each sequence's S = s cp tokens;
// the balance loss needs the whole sequence's counts and mean
// probabilities, so they are summed over `cp` (an all-reduce, blocking
// within its timeout). Every cp rank then computes the same loss, and
// backward through the sum is exact: each rank's probabilities receive the
// gradient of every rank's copy (cp times its own, as the copies are equal),
// which data-parallel averaging over dp x cp divides back.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

#include "router.h"
#include "strata/runtime/communicator.h"

namespace strata::expert_parallel::detail {

struct RoutingLosses {
  at::Tensor balance;  // scalar, 1 at perfect balance
  at::Tensor z;        // scalar
};

// Counts the router's choices (routing.experts) before any capacity drop:
// the balance term is about what the router asks for.
RoutingLosses routingLosses(const Routing& routing, int64_t sequences, Communicator* cp);

}  // namespace strata::expert_parallel::detail
