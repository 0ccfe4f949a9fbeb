#include "strata/train/precision.h"

#include <ATen/autocast_mode.h>

#include <fstream>
#include <sstream>

#include "runtime/torch_compat.h"
#include "strata/error.h"
#include "strata/report/peak_flops.h"

namespace strata::train {
namespace {

bool cpuHasNativeBf16() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string word;
  while (cpuinfo >> word) {
    if (word == "avx512_bf16" || word == "amx_bf16") return true;
  }
  return false;
}

}  // namespace

void checkPrecisionSupported(const std::string& precision, c10::DeviceType device) {
  if (precision == "fp32") return;
  if (precision != "bf16") {
    throw ConfigError("unknown precision '" + precision + "' (known: fp32, bf16)");
  }
  if (device != at::kCUDA && !cpuHasNativeBf16()) {
    throw ConfigError("precision bf16 needs a CPU with AVX512-BF16 or AMX (or a CUDA device); " +
                      cpuModelName() +
                      " has neither, so bf16 would be emulated and slower than fp32: use "
                      "--precision fp32");
  }
}

PrecisionGuard::PrecisionGuard(const std::string& precision, c10::DeviceType device)
    : enabled_(precision == "bf16"), device_(device) {
  if (!enabled_) return;
  previous_ = compat::autocastEnabled(device_);
  previousDtype_ = compat::autocastDtype(device_);
  compat::setAutocast(device_, true, at::kBFloat16);
}

PrecisionGuard::~PrecisionGuard() {
  if (!enabled_) return;
  compat::setAutocast(device_, previous_, previousDtype_);
  at::autocast::clear_cache();
}

}  // namespace strata::train
