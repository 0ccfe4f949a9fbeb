// Intra-op threads of this process, for LibTorch and for the BLAS under it.
//
// LibTorch's set_num_threads does not reach OpenBLAS's own thread pool (the
// pthread build Debian ships reads OPENBLAS_NUM_THREADS / OMP_NUM_THREADS
// once, when it loads), so a worker asked for one thread would still run
// matrix products on every core, and the workers sharing a machine would
// fight over it. setIntraOpThreads sets both. Never blocks or throws.
#pragma once

namespace strata {

// Sets LibTorch's intra-op threads and, when the process uses OpenBLAS, its
// threads too. Returns the previous LibTorch value.
int setIntraOpThreads(int threads);

}  // namespace strata
