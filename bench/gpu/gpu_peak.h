// The dense bf16 matrix peak of the GPU bench_gpu runs on, for its MFU.
//
// Vendors' datasheet figures without sparsity, by the device's name as CUDA
// reports it; 0 for a GPU not in the table (MFU is then not reported). The
// figures are spec peaks: H100 and H200 SXM 989.4 TFLOP/s (a plain 8192^3
// bf16 matrix product reaches about 790 on the H200 this project borrows).
#pragma once

#include <string>

namespace strata::bench {

struct GpuPeak {
  std::string device;         // "NVIDIA H200"
  double bf16FlopsPerSecond;  // 0: unknown
  std::string source;         // what the figure is
};

// Reads the current GPU's name; only call where CUDA is available.
GpuPeak currentGpuPeak();

}  // namespace strata::bench
