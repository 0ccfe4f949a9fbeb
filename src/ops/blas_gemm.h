// The single-precision GEMM of the BLAS that LibTorch links (Fortran's
// sgemm_: MKL in PyPI's torch wheels, OpenBLAS in others), found at run time
// and absent where LibTorch exports none. The operations of strata/ops call
// it for CPU float32 operands where a product must read or write its rows
// where they lie inside a wider tensor, and fall back to LibTorch's kernels
// where blasGemmEnabled() is false.
//
// STRATA_BLAS_GEMM=0 in the environment turns it off, to compare (1 or unset:
// on; any other value throws ConfigError naming it). Nothing blocks.
#pragma once

#include <cstdint>

namespace strata::ops::detail {

// Whether a BLAS sgemm is loaded and not turned off (env_switch.h).
bool blasGemmEnabled();

// Row-major c [m, n] = alpha op(a) op(b) + beta c, op(a) [m, k] and op(b)
// [k, n], each matrix given by its first element and the distance between
// its rows (lda, ldb, ldc), so that a head's rows inside a wider tensor are
// multiplied where they lie. Requires blasGemmEnabled(); throws c10::Error
// naming the shapes when one exceeds the BLAS's 32-bit sizes.
void sgemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
           int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc);

}  // namespace strata::ops::detail
