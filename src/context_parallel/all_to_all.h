// The all-to-all of Ulysses attention (Communicator::allToAll in equal pieces).
//
// x is cut along `splitDim` into size() equal pieces; piece i goes to rank
// i, and the pieces arriving from ranks 0, 1, ... are joined along
// `concatDim` in rank order. allToAllFunction is differentiable: its
// backward is the all-to-all back (split along concatDim, join along
// splitDim).
//
// Blocks in the group's all-to-all, bounded by the
// communicator's timeout (TimeoutError / PeerError naming the peer); every
// rank of the group must call it alike, with equal shapes.
#pragma once

#include <ATen/core/Tensor.h>

#include "strata/runtime/communicator.h"

namespace strata::context_parallel::detail {

at::Tensor allToAll(const at::Tensor& x, int64_t splitDim, int64_t concatDim, Communicator& group);

at::Tensor allToAllFunction(const at::Tensor& x, int64_t splitDim, int64_t concatDim,
                            Communicator& group);

}  // namespace strata::context_parallel::detail
