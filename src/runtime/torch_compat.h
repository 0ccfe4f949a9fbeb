// The one place that knows how LibTorch versions differ.
//
// In LibTorch 1.13 a c10d backend (Gloo, NCCL) *is* a c10d::ProcessGroup; from
// 2.0 on it is a c10d::Backend wrapped by a ProcessGroup. Strata talks to the
// backend object directly, whose collective methods are the same in both.
#pragma once

#include <torch/version.h>

#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>

#ifdef STRATA_WITH_NCCL
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

namespace strata::compat {

#if TORCH_VERSION_MAJOR >= 2
using C10dBackend = c10d::Backend;
#else
using C10dBackend = c10d::ProcessGroup;
#endif

}  // namespace strata::compat
