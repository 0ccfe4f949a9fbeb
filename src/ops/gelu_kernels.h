// GELU's forward and backward over float arrays, sixteen lanes at a time
// (AVX-512 F). Callers check avx512Available() first; the functions are
// built for AVX-512 whatever the compiler's target.
#pragma once

#include <cstdint>

namespace strata::ops::detail {

// Whether this CPU runs AVX-512 F.
bool avx512Available();

// y[i] = gelu(x[i]) for i < n.
void geluForward(const float* x, float* y, int64_t n, bool tanh);

// dx[i] = dy[i] gelu'(x[i]) for i < n.
void geluBackward(const float* dy, const float* x, float* dx, int64_t n, bool tanh);

}  // namespace strata::ops::detail
