// SwiGLU's product silu(gate) * up and its backward over float arrays,
// sixteen lanes at a time (AVX-512 F). Callers check avx512Available()
// (gelu_kernels.h) first; the functions are built for AVX-512 whatever the
// compiler's target.
#pragma once

#include <cstdint>

namespace strata::ops::detail {

// h[i] = silu(g[i]) u[i] for i < n.
void swigluForward(const float* g, const float* u, float* h, int64_t n);

// dg[i] = dh[i] u[i] silu'(g[i]), du[i] = dh[i] silu(g[i]) for i < n.
void swigluBackward(const float* dh, const float* g, const float* u, float* dg, float* du,
                    int64_t n);

}  // namespace strata::ops::detail
