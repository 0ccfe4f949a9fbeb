// STRATA_TORCH_AT_LEAST(major, minor): whether the LibTorch being compiled
// against is that release or later, for the few places whose code differs
// (torch_compat.h gathers most of them).
#pragma once

#include <torch/version.h>

#define STRATA_TORCH_AT_LEAST(major, minor) \
  (TORCH_VERSION_MAJOR > (major) ||         \
   (TORCH_VERSION_MAJOR == (major) && TORCH_VERSION_MINOR >= (minor)))

// LibTorch 2.3 made c10::Allocator::allocate non-const and added copy_data:
// an allocator declares `allocate(size_t) STRATA_ALLOCATE_CONST override`
// and, from 2.3 on, copy_data.
#if STRATA_TORCH_AT_LEAST(2, 3)
#define STRATA_ALLOCATE_CONST
#else
#define STRATA_ALLOCATE_CONST const
#endif
