// The communication of tensor parallelism, as differentiable functions.
//
// Each function is an autograd function over the tensor-parallel group `tp`
// whose backward is the adjoint of its forward (formulas in comm_ops.cpp).
// The pairs follow Megatron-LM's convention: a region is "tensor-parallel"
// when each rank computes a different part of what follows (so gradients
// arriving from it are partial and must be summed), and "replicated" when
// every rank computes the same thing (so gradients are already complete).
//
// Blocking: forward and backward block in the group's collectives, at most
// the communicator's timeout (TimeoutError / PeerError from the
// communicator). Every rank of `tp` must call the same functions in the same
// order. With tp.size() == 1 each function returns its input unchanged and
// communicates nothing.
//
// Throws ConfigError, before communicating, when a dimension to be split is
// not divisible by tp.size() (identical shapes on every rank give the same
// error everywhere).
//
// Lifetime: the autograd graph refers to `tp`; it must outlive backward().
#pragma once

#include <ATen/core/Tensor.h>

#include "strata/runtime/communicator.h"

namespace strata::tensor_parallel {

// Entering a tensor-parallel region with a replicated tensor.
// Forward identity, backward all-reduce (sum) of the gradient.
at::Tensor copyToTensorRegion(const at::Tensor& x, Communicator& tp);

// Leaving a tensor-parallel region by summing partial results.
// Forward all-reduce (sum), backward identity.
at::Tensor reduceFromTensorRegion(const at::Tensor& x, Communicator& tp);

// Leaving a tensor-parallel region whose last dimension is split.
// Forward all-gather along the last dimension, backward keep this rank's slice.
at::Tensor gatherFromTensorRegion(const at::Tensor& x, Communicator& tp);

// Entering a tensor-parallel region by splitting the last dimension.
// Forward keep this rank's slice of the last dimension, backward all-gather.
at::Tensor scatterToTensorRegion(const at::Tensor& x, Communicator& tp);

// Sequence parallel: activations [s/p, ...] sharded along the sequence (dim 0).
// Forward all-gather along dim 0 ([s/p, ...] -> [s, ...]), backward reduce-scatter.
at::Tensor gatherFromSequenceRegion(const at::Tensor& x, Communicator& tp);

// Forward reduce-scatter along dim 0 ([s, ...] partial sums -> [s/p, ...]),
// backward all-gather along dim 0.
at::Tensor reduceScatterToSequenceRegion(const at::Tensor& x, Communicator& tp);

// Entering the sequence-parallel region with a replicated tensor.
// Forward keep this rank's slice of dim 0, backward all-gather along dim 0.
at::Tensor scatterToSequenceRegion(const at::Tensor& x, Communicator& tp);

// The input of column-parallel products: replicated x [s, b, ...] through
// copyToTensorRegion, or sequence-sharded x [s/p, b, ...] all-gathered
// (gatherFromSequenceRegion). A layer that feeds several products from one
// input (q, k and v; SwiGLU's gate and up) enters once and hands the result
// to each product's forwardEntered.
at::Tensor enterTensorRegion(const at::Tensor& x, bool sequenceParallel, Communicator& tp);

}  // namespace strata::tensor_parallel
