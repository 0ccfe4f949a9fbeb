// The few LibTorch calls Strata wraps: autocast switched per device type (the
// per-device functions of earlier releases are deprecated since 2.4), causal
// attention through the fused kernels, and NCCL's options. Strata supports
// LibTorch 2.4 and later (runtime/torch_version.h stops older ones).
#pragma once

#include <ATen/ATen.h>
#include <ATen/autocast_mode.h>

#include <string>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>

#ifdef STRATA_WITH_NCCL
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

#include "runtime/torch_version.h"

namespace strata::compat {

// Autocast for `device` (kCPU or kCUDA) on or off, computing in `dtype`.
inline void setAutocast(at::DeviceType device, bool enabled, at::ScalarType dtype) {
  at::autocast::set_autocast_dtype(device, dtype);
  at::autocast::set_autocast_enabled(device, enabled);
}

inline bool autocastEnabled(at::DeviceType device) {
  return at::autocast::is_autocast_enabled(device);
}

inline at::ScalarType autocastDtype(at::DeviceType device) {
  return at::autocast::get_autocast_dtype(device);
}

// softmax(Q K^T / sqrt(d) + causal mask) V, q/k/v [b, heads, s, d], through
// the fused kernels (flash attention on Hopper for bf16).
inline at::Tensor causalAttention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) {
  return at::scaled_dot_product_attention(q, k, v, /*attn_mask=*/{}, /*dropout_p=*/0.0,
                                          /*is_causal=*/true);
}

#ifdef STRATA_WITH_NCCL
// NCCL's options: `timeout` bounds every operation through ProcessGroupNCCL's
// watchdog, which takes the process down naming the operation and the group
// (`name`).
inline c10::intrusive_ptr<c10d::ProcessGroupNCCL::Options> ncclOptions(
    std::chrono::milliseconds timeout, const std::string& name) {
  auto options = c10d::ProcessGroupNCCL::Options::create();
  options->timeout = timeout;
  options->group_name = name;
  return options;
}
#endif

}  // namespace strata::compat
