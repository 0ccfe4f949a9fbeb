// The ops tests' measure of how far a result is from its reference.
#pragma once

#include <ATen/ATen.h>

namespace strata::ops {

// max |a - b| / max |b|.
inline double relativeError(const at::Tensor& a, const at::Tensor& b) {
  return ((a - b).abs().max() / b.abs().max()).item<double>();
}

}  // namespace strata::ops
