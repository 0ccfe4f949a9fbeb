// The environment variables that turn one of strata/ops's own kernels off,
// to compare with LibTorch's (STRATA_BLAS_GEMM, STRATA_OWN_GELU).
#pragma once

namespace strata::ops::detail {

// False where `variable` is "0"; true where it is "1" or unset. Any other
// value throws ConfigError naming the variable and the value. Reads the
// environment on every call (a few hundred nanoseconds against a kernel's
// milliseconds), so that a process can switch it.
bool switchedOn(const char* variable);

}  // namespace strata::ops::detail
