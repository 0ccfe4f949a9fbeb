#include "onednn_gemm.h"

#include <c10/util/Exception.h>
#include <dlfcn.h>

#include "env_switch.h"

namespace strata::ops::detail {
namespace {

// oneDNN's C GEMM (dnnl.h): row-major C = alpha op(A) op(B) + beta C;
// returns dnnl_success, 0, or an error status.
using Sgemm = int (*)(char transA, char transB, int64_t m, int64_t n, int64_t k, float alpha,
                      const float* a, int64_t lda, const float* b, int64_t ldb, float beta,
                      float* c, int64_t ldc);

Sgemm loadedSgemm() {
  static const Sgemm found = reinterpret_cast<Sgemm>(dlsym(RTLD_DEFAULT, "dnnl_sgemm"));
  return found;
}

}  // namespace

bool oneDnnGemmEnabled() { return switchedOn("STRATA_ONEDNN_GEMM") && loadedSgemm() != nullptr; }

void sgemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
           int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  int status = loadedSgemm()(transA ? 'T' : 'N', transB ? 'T' : 'N', m, n, k, alpha, a, lda, b, ldb,
                             beta, c, ldc);
  TORCH_CHECK(status == 0, "oneDNN's sgemm failed with status ", status, " on a [", m, ", ", k,
              "] x [", k, ", ", n, "] product");
}

}  // namespace strata::ops::detail
