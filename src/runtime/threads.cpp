#include "strata/runtime/threads.h"

#include <ATen/Parallel.h>
#include <dlfcn.h>

namespace strata {

int setIntraOpThreads(int threads) {
  int previous = at::get_num_threads();
  at::set_num_threads(threads);
  // Looked up at run time: the BLAS is whatever libblas.so.3 the system's
  // alternatives point at, and only OpenBLAS has this entry point.
  using SetThreads = void (*)(int);
  if (auto set = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"))) {
    set(threads);
  }
  return previous;
}

}  // namespace strata
