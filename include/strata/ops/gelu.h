// GELU, exact or tanh-approximated, each direction one vectorised pass over
// memory on CPUs with AVX-512.
//
//   exact: gelu(x) = x Phi(x),  Phi(x) = (1 + erf(x / sqrt 2)) / 2
//          gelu'(x) = Phi(x) + x phi(x),  phi(x) = exp(-x^2 / 2) / sqrt(2 pi)
//   tanh:  gelu(x) = x (1 + tanh u) / 2,  u = sqrt(2/pi) (x + 0.044715 x^3)
//
// Debian's LibTorch runs its GELU kernels at AVX2 width; on a GPT block's
// [tokens, ffn] activations they are compute-bound (docs/step-speed.md).
// Here erf is Abramowitz and Stegun's 7.1.26 (absolute error under 1.5e-7)
// and exp a degree-7 polynomial after range reduction, sixteen lanes at a
// time. gelu() takes contiguous CPU float32 tensors outside autocast on a CPU
// with AVX-512 F; anything else goes to at::gelu, as does everything when
// STRATA_OWN_GELU=0 (1 or unset: on; another value throws ConfigError).
// Results equal at::gelu's within 1e-6 relative. Nothing blocks.
#pragma once

#include <ATen/core/Tensor.h>

namespace strata::ops {

// x [...] -> [...]; `tanh`: the tanh approximation (at::gelu's "tanh").
at::Tensor gelu(const at::Tensor& x, bool tanh);

// Whether gelu(x, ...) takes its own kernels.
bool geluUsesOwnKernel(const at::Tensor& x);

}  // namespace strata::ops
