// One AdamW update of one tensor, in place, in a single pass over memory.
//
// The arithmetic is torch::optim::AdamW's, in its order,
// on the gradient g = s grad scaled by `gradScale` (clipping's factor, taken
// here rather than in a pass of its own; rounded to float as LibTorch's
// grad.mul_(s) rounds it, so the step is the same):
//   p <- p (1 - lr wd)
//   m <- b1 m + (1 - b1) g,   v <- b2 v + (1 - b2) g^2
//   p <- p - lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps)
// LibTorch runs it as eight tensor operations, each a pass over memory and
// two of them a temporary the size of the parameter. Here each element of
// p, g, m and v is read once and p, m, v written once.
//
// Nothing blocks or communicates. Float32 tensors on the CPU, contiguous and
// of one size, take the single pass, split over the intra-op threads; any
// other (a GPU's, another dtype, a strided view) take the eight tensor
// operations. Results agree to rounding: the single pass rounds each
// product separately where LibTorch's vector kernels may fuse a
// multiply-add.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

namespace strata::optim {

// The hyper-parameters of one update; `step` counts updates, 1 on the first.
struct AdamWStep {
  double lr = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weightDecay = 0;
  int64_t step = 1;
  double gradScale = 1;  // s above; `grad` itself is left as it is
};

// param, expAvg (m) and expAvgSq (v) are updated in place from grad.
void adamwUpdate(const at::Tensor& param, const at::Tensor& grad, const at::Tensor& expAvg,
                 const at::Tensor& expAvgSq, const AdamWStep& hyper);

}  // namespace strata::optim
