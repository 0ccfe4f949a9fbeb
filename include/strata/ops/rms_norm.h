// RMSNorm, each direction one pass over each row while it is in cache.
//
//   y = x r w,   r = 1 / sqrt(mean_j x_j^2 + eps)   per row of x [..., hidden]
//   dx = r (dy w) - x r^3 mean_j(dy_j w_j x_j),   dw = sum over rows of dy x r
//
// Written out in LibTorch the forward is six operations and the backward
// about a dozen, each a pass over the whole activation (x^2, its mean, the
// rsqrt, two products; their backwards). Here the forward reads a row to sum
// its squares and again to write y; the backward reads dy and x once for the
// row's dot product and once to write dx, summing dw in the same pass
// (a buffer per intra-op thread, added at the end). The statistics are float32,
// as the written-out form's are; results equal it to rounding (the order of
// the row's sum).
//
// rmsNorm() takes contiguous CPU float32 x and weight outside autocast;
// anything else (bf16, a GPU's tensors) goes to the written-out form: the
// statistics in float32, the normalised value back in x's type before the
// weight scales it. Nothing blocks or communicates.
#pragma once

#include <ATen/core/Tensor.h>

namespace strata::ops {

// x [..., hidden], weight [hidden] -> [..., hidden] in x's type.
at::Tensor rmsNorm(const at::Tensor& x, const at::Tensor& weight, double eps);

// Whether rmsNorm(x, weight, ...) takes its one-pass kernels.
bool rmsNormUsesOwnKernel(const at::Tensor& x, const at::Tensor& weight);

}  // namespace strata::ops
