// SwiGLU's gated product h = silu(gate) * up, each direction one vectorised
// pass over memory on CPUs with AVX-512:
//
//   silu(g) = g s,  s = sigmoid(g) = 1 / (1 + e^-g)
//   dgate = dh up s (1 + g (1 - s)),   dup = dh silu(g)
//
// Written out in LibTorch the forward is two passes (silu, then the product)
// and keeps silu(gate) for the backward, whose three passes read it back. Here
// each direction reads its operands once and writes its results once, and
// the backward keeps only gate and up. e^v is gelu's degree-7 polynomial
// (avx512_lanes.h). The kernels take contiguous CPU float32 tensors of one
// shape outside autocast on a CPU with AVX-512 F; anything else runs as
// at::silu(gate) * up forward and tensor operations backward, keeping the
// same two tensors, so a step's activation memory is the same on every
// device (the planner counts gate, up and the product). Results equal the
// written-out form within 1e-6 relative. Nothing blocks.
#pragma once

#include <ATen/core/Tensor.h>

namespace strata::ops {

// gate [...], up [...] (the same shape) -> [...].
at::Tensor swiglu(const at::Tensor& gate, const at::Tensor& up);

// Whether swiglu(gate, up) takes its own kernels.
bool swigluUsesOwnKernel(const at::Tensor& gate, const at::Tensor& up);

}  // namespace strata::ops
