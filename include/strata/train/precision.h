// Training precision: "fp32", or "bf16" autocast (matrix products in
// bfloat16, master weights and optimizer state in float32).
//
// On CPU, bf16 autocast only pays off with native bfloat16 instructions
// (AVX512-BF16 or AMX); elsewhere LibTorch emulates them, slower than fp32.
// On CUDA it runs on the tensor cores. checkPrecisionSupported throws
// ConfigError naming the precision and, for bf16 on a CPU without them, the
// CPU and what to use instead. Nothing blocks.
#pragma once

#include <c10/core/DeviceType.h>

#include <string>

namespace strata::train {

// `device`: where the model trains (kCPU or kCUDA).
void checkPrecisionSupported(const std::string& precision, c10::DeviceType device = c10::kCPU);

// Turns autocast to bf16 on for `device` for its lifetime when precision is
// "bf16", and puts back what was there before.
class PrecisionGuard {
 public:
  explicit PrecisionGuard(const std::string& precision, c10::DeviceType device = c10::kCPU);
  ~PrecisionGuard();
  PrecisionGuard(const PrecisionGuard&) = delete;
  PrecisionGuard& operator=(const PrecisionGuard&) = delete;

 private:
  bool enabled_;
  c10::DeviceType device_;
  bool previous_ = false;
  c10::ScalarType previousDtype_ = c10::kBFloat16;
};

}  // namespace strata::train
