#include "blas_gemm.h"

#include <c10/util/Exception.h>
#include <dlfcn.h>

#include <limits>

#include "env_switch.h"

namespace strata::ops::detail {
namespace {

// The reference BLAS's column-major C = alpha op(A) op(B) + beta C, every
// argument by address, sizes as 32-bit integers (the LP64 interface).
using FortranSgemm = void (*)(const char* transA, const char* transB, const int* m, const int* n,
                              const int* k, const float* alpha, const float* a, const int* lda,
                              const float* b, const int* ldb, const float* beta, float* c,
                              const int* ldc);

FortranSgemm loadedSgemm() {
  static const FortranSgemm found = reinterpret_cast<FortranSgemm>(dlsym(RTLD_DEFAULT, "sgemm_"));
  return found;
}

int blasInt(int64_t value, const char* what, int64_t m, int64_t n, int64_t k) {
  TORCH_CHECK(value <= std::numeric_limits<int>::max(), "a [", m, ", ", k, "] x [", k, ", ", n,
              "] product exceeds the BLAS's 32-bit sizes (", what, " ", value, ")");
  return static_cast<int>(value);
}

}  // namespace

bool blasGemmEnabled() { return switchedOn("STRATA_BLAS_GEMM") && loadedSgemm() != nullptr; }

// A row-major matrix is its transpose in column-major order, so row-major
// C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: the same call with
// the operands, their flags and m and n swapped.
void sgemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
           int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  const char flagA = transA ? 'T' : 'N', flagB = transB ? 'T' : 'N';
  const int rows = blasInt(n, "n", m, n, k), cols = blasInt(m, "m", m, n, k),
            depth = blasInt(k, "k", m, n, k);
  const int strideA = blasInt(lda, "lda", m, n, k), strideB = blasInt(ldb, "ldb", m, n, k),
            strideC = blasInt(ldc, "ldc", m, n, k);
  loadedSgemm()(&flagB, &flagA, &rows, &cols, &depth, &alpha, b, &strideB, a, &strideA, &beta, c,
                &strideC);
}

}  // namespace strata::ops::detail
