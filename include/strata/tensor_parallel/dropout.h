// Dropout whose masks are a pure function of (seed, call number, position),
// so that a tensor-parallel run draws exactly the masks of the serial run:
//   - replicated regions: one mask for the whole tensor from one generator;
//     every tp rank draws the same mask (same seed, same shape).
//   - head-sharded regions (attention probabilities): one generator per
//     global head, seeded from (seed, call, head); each rank draws only its
//     own heads, so masks differ across ranks and match serial head by head.
//   - sequence-sharded regions (sequence parallel): the full-sequence mask is
//     drawn as in the replicated case and each rank keeps its own rows, so
//     masks differ across ranks and match serial. This costs p times the
//     random numbers of the local slice; LibTorch's CPU generator
//     (mt19937) cannot jump ahead to a row. Any other slice of a whole
//     tensor (a row-parallel layer's input columns) is drawn alike.
// Each training-mode call advances the call number, identically on every
// rank as long as every rank runs the same forward passes. Strata's layers
// call each of their dropouts once per forward, so the call number counts
// micro-batches; setDropoutCalls() moves it to a given micro-batch.
//
// Nothing here communicates. Throws ConfigError for p outside [0, 1).
#pragma once

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>

#include <cstdint>

#include "strata/runtime/communicator.h"

namespace strata::tensor_parallel {

class SeededDropout {
 public:
  SeededDropout(double p, uint64_t seed);

  double p() const { return p_; }

  // x: any shape; the same mask on every rank.
  at::Tensor replicated(const at::Tensor& x, bool training);
  // x: rows [r*n, (r+1)*n) of dim 0 of a [p*n, ...] tensor, r = tp.rank().
  at::Tensor sequenceSharded(const at::Tensor& x, bool training, const Communicator& tp);
  // x: slices [first, first + x.size(dim)) along `dim` of a tensor whose
  // dim holds `whole`; its mask is that slice of the whole tensor's (a copy:
  // backward keeps the slice only).
  at::Tensor sliced(const at::Tensor& x, int64_t dim, int64_t first, int64_t whole, bool training);
  // x: slices [first, first + x.size(dim)) of the global units along `dim`.
  at::Tensor unitSharded(const at::Tensor& x, int64_t dim, int64_t first, bool training);

  // The call number as a one-element int64 tensor, for the owning module to
  // register as a buffer: checkpoints then save it, and a resumed run draws
  // the masks the uninterrupted run would have drawn.
  const at::Tensor& callCounter() const { return calls_; }

 private:
  uint64_t nextCallSeed();
  at::Tensor applyMask(const at::Tensor& x, const at::Tensor& keep) const;

  double p_;
  uint64_t seed_;
  at::Tensor calls_;  // [1] int64
};

// Sets the call number of every SeededDropout registered in `module` or its
// descendants (the buffers named "...dropout_calls") to `calls`. The trainer
// sets it to the global index of a replica's first micro-batch of the step,
// so data-parallel replicas draw the masks one process draws for the same
// samples.
void setDropoutCalls(torch::nn::Module& module, int64_t calls);

}  // namespace strata::tensor_parallel
