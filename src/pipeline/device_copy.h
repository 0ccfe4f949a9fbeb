// Moving activations, gradients and micro-batches to a stage's device.
//
// Toward a GPU the copy is queued on the destination's current stream and the
// host goes on at once: LibTorch orders a copy between GPUs against both
// devices' current streams with events, and one from pageable host memory is
// staged by CUDA before the call returns, so no caller can see stale data.
// Toward the CPU the copy stays blocking, since the host reads it next.
#pragma once

#include <ATen/core/Tensor.h>

namespace strata::pipeline {

inline at::Tensor toStageDevice(const at::Tensor& tensor, at::Device device) {
  return tensor.to(device, /*non_blocking=*/device.is_cuda());
}

}  // namespace strata::pipeline
