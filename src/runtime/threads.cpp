#include "strata/runtime/threads.h"

#include <ATen/Parallel.h>
#include <dlfcn.h>

namespace strata {

int setIntraOpThreads(int threads) {
  int previous = at::get_num_threads();
  at::set_num_threads(threads);
  // Looked up at run time: only OpenBLAS has this entry point, and only a
  // LibTorch that links OpenBLAS loads it.
  using SetThreads = void (*)(int);
  if (auto set = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"))) {
    set(threads);
  }
  return previous;
}

}  // namespace strata
