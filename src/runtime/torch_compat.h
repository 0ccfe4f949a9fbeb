// The one place that knows how LibTorch versions differ.
//
// In LibTorch 1.13 a c10d backend (Gloo, NCCL) *is* a c10d::ProcessGroup; from
// 2.0 on it is a c10d::Backend wrapped by a ProcessGroup. Strata talks to the
// backend object directly, whose collective methods are the same in both.
//
// Autocast: 2.4 replaced the per-device functions (set_cpu_enabled,
// set_autocast_gpu_dtype, ...) by ones taking the device type, and marked the
// old ones deprecated. Attention: 2.0 added at::scaled_dot_product_attention
// (flash and memory-efficient kernels on CUDA); 1.13 has none.
#pragma once

#include <ATen/ATen.h>
#include <ATen/autocast_mode.h>

#include <string>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>

#ifdef STRATA_WITH_NCCL
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

#include "runtime/torch_version.h"

// Whether at::scaled_dot_product_attention exists.
#define STRATA_HAS_SDPA STRATA_TORCH_AT_LEAST(2, 0)

namespace strata::compat {

#if TORCH_VERSION_MAJOR >= 2
using C10dBackend = c10d::Backend;
#else
using C10dBackend = c10d::ProcessGroup;
#endif

// Autocast for `device` (kCPU or kCUDA) on or off, computing in `dtype`.
inline void setAutocast(at::DeviceType device, bool enabled, at::ScalarType dtype) {
#if STRATA_TORCH_AT_LEAST(2, 4)
  at::autocast::set_autocast_dtype(device, dtype);
  at::autocast::set_autocast_enabled(device, enabled);
#else
  if (device == at::kCUDA) {
    at::autocast::set_autocast_gpu_dtype(dtype);
    at::autocast::set_enabled(enabled);
  } else {
    at::autocast::set_autocast_cpu_dtype(dtype);
    at::autocast::set_cpu_enabled(enabled);
  }
#endif
}

inline bool autocastEnabled(at::DeviceType device) {
#if STRATA_TORCH_AT_LEAST(2, 4)
  return at::autocast::is_autocast_enabled(device);
#else
  return device == at::kCUDA ? at::autocast::is_enabled() : at::autocast::is_cpu_enabled();
#endif
}

inline at::ScalarType autocastDtype(at::DeviceType device) {
#if STRATA_TORCH_AT_LEAST(2, 4)
  return at::autocast::get_autocast_dtype(device);
#else
  return device == at::kCUDA ? at::autocast::get_autocast_gpu_dtype()
                             : at::autocast::get_autocast_cpu_dtype();
#endif
}

#if STRATA_HAS_SDPA
// softmax(Q K^T / sqrt(d) + causal mask) V, q/k/v [b, heads, s, d], through
// the fused kernels (flash attention on Hopper for bf16).
inline at::Tensor causalAttention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) {
  return at::scaled_dot_product_attention(q, k, v, /*attn_mask=*/{}, /*dropout_p=*/0.0,
                                          /*is_causal=*/true);
}
#endif

#ifdef STRATA_WITH_NCCL
// NCCL's options: `timeout` bounds every operation through ProcessGroupNCCL's
// watchdog, which takes the process down naming the operation and the group
// (`name`, where this LibTorch lets the group be named).
inline c10::intrusive_ptr<c10d::ProcessGroupNCCL::Options> ncclOptions(
    std::chrono::milliseconds timeout, const std::string& name) {
  auto options = c10d::ProcessGroupNCCL::Options::create();
  options->timeout = timeout;
#if STRATA_TORCH_AT_LEAST(2, 3)
  options->group_name = name;
#else
  (void)name;
#endif
  return options;
}
#endif

}  // namespace strata::compat
