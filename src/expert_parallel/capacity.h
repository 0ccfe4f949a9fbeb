// Expert capacity: which of a micro-batch's assignments (token, slot) the
// experts accept when each takes at most
//   C = ceil(factor * S * k / E)
// assignments of every sequence of S tokens, the earliest positions first
// and, at one position, slot 0 before slot 1 (moe_options.h).
//
// Under context parallelism a rank holds only some positions of each
// sequence (sequence_layout.h), so the ranks all-gather their choices over
// `cp` (int64 [s, b, k] each, blocking within the timeout) and every rank
// ranks the whole sequence. Deterministic: the same drops on every layout.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

#include "strata/runtime/communicator.h"

namespace strata::expert_parallel::detail {

// The per-sequence capacity of one expert.
int64_t expertCapacity(double factor, int64_t sequenceLength, int64_t topK, int64_t experts);

// experts [s, b, k] (int64, this rank's positions `positions` [s] of
// sequences of S = s cp tokens) -> accepted [s, b, k] bool.
at::Tensor acceptedAssignments(const at::Tensor& experts, const at::Tensor& positions,
                               int64_t capacity, int64_t numExperts, Communicator* cp);

}  // namespace strata::expert_parallel::detail
