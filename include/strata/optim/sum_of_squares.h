// The sum of a tensor's squared elements, for gradient norms.
//
// Accumulated in float64, so that millions of small squares keep their
// digits. Nothing blocks or communicates. A contiguous float32 tensor on the
// CPU is read once, with no float64 copy; any other tensor is converted.
#pragma once

#include <ATen/core/Tensor.h>

namespace strata::optim {

// sum_i values_i^2 as a 0-dim float64 tensor on values' device.
at::Tensor sumOfSquares(const at::Tensor& values);

// The same as a double, for a CPU tensor: no tensor is made for the result.
double sumOfSquaresOnHost(const at::Tensor& cpuValues);

}  // namespace strata::optim
