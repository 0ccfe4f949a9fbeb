// oneDNN's single-precision GEMM, found at run time where LibTorch links
// oneDNN as a shared library (Debian's does) and absent where it carries it
// hidden inside (PyTorch's own builds). The operations of strata/ops call it
// for CPU float32 operands and fall back to LibTorch's kernels where
// enabled() is false.
//
// STRATA_ONEDNN_GEMM=0 in the environment turns it off, to compare (1 or
// unset: on; any other value throws ConfigError naming it). Nothing blocks.
#pragma once

#include <cstdint>

namespace strata::ops::detail {

// Whether oneDNN's GEMM is loaded and not turned off (env_switch.h).
bool oneDnnGemmEnabled();

// Row-major c [m, n] = alpha op(a) op(b) + beta c, op(a) [m, k] and op(b)
// [k, n], each matrix given by its first element and the distance between
// its rows (lda, ldb, ldc), so that a head's rows inside a wider tensor are
// multiplied where they lie. Requires oneDnnGemmEnabled(); throws c10::Error
// with the shapes if oneDNN reports an error.
void sgemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
           int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc);

}  // namespace strata::ops::detail
