// Plain (non-differentiable) collectives on whole tensors, shared by the
// autograd functions and the layers. Each blocks in the communicator, at most
// its timeout; the split helpers throw ConfigError before communicating.
#pragma once

#include <ATen/core/Tensor.h>

#include <string>

#include "strata/runtime/communicator.h"

namespace strata::tensor_parallel::detail {

// Throws ConfigError "<what> <size> is not divisible by the tensor-parallel
// size <p> (group <name>)".
void requireDivisible(int64_t size, const std::string& what, const Communicator& tp);

// Sum over the group; returns a new tensor, `x` is left untouched.
at::Tensor allReduceSum(const at::Tensor& x, Communicator& tp);

// [n, ...] on each rank -> [p * n, ...], rank-major.
at::Tensor allGatherFirstDim(const at::Tensor& x, Communicator& tp);

// [..., n] on each rank -> [..., p * n], rank-major.
at::Tensor allGatherLastDim(const at::Tensor& x, Communicator& tp);

// [p * n, ...] partial sums on each rank -> this rank's [n, ...] of the sum.
at::Tensor reduceScatterFirstDim(const at::Tensor& x, Communicator& tp);

// This rank's contiguous 1/p of dimension `dim`.
at::Tensor localSlice(const at::Tensor& x, int64_t dim, const Communicator& tp);

}  // namespace strata::tensor_parallel::detail
