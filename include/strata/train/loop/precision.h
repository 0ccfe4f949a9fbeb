// Training precision: "fp32", or "bf16" autocast (matrix products in
// bfloat16, master weights and optimizer state in float32).
//
// On CPU, bf16 autocast only pays off with native bfloat16 instructions
// (AVX512-BF16 or AMX); elsewhere LibTorch emulates them, slower than fp32.
// checkPrecisionSupported throws ConfigError naming the precision and, for
// bf16 on a CPU without them, the CPU and what to use instead. Nothing blocks.
#pragma once

#include <string>

namespace strata::train {

void checkPrecisionSupported(const std::string& precision);

// Turns CPU autocast to bf16 on for its lifetime when precision is "bf16".
class PrecisionGuard {
 public:
  explicit PrecisionGuard(const std::string& precision);
  ~PrecisionGuard();
  PrecisionGuard(const PrecisionGuard&) = delete;
  PrecisionGuard& operator=(const PrecisionGuard&) = delete;

 private:
  bool enabled_;
  bool previous_ = false;
};

}  // namespace strata::train
