// Intra-op threads of this process, for LibTorch and for the BLAS under it.
//
// MKL (PyPI's x86 wheels, pytorch.org's x86 archives) follows LibTorch's
// set_num_threads. A pthread build of OpenBLAS, which some LibTorch builds
// link instead, reads OPENBLAS_NUM_THREADS / OMP_NUM_THREADS once, when it
// loads, and keeps its own thread pool: a worker asked for one thread would
// still run matrix products on every core, and the workers sharing a machine
// would fight over them. setIntraOpThreads sets both. Never blocks or throws.
#pragma once

namespace strata {

// Sets LibTorch's intra-op threads and, when the process uses OpenBLAS, its
// threads too. Returns the previous LibTorch value.
int setIntraOpThreads(int threads);

}  // namespace strata
