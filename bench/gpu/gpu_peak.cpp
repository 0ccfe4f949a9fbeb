#include "gpu_peak.h"

#include <utility>
#include <vector>

#ifdef STRATA_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#endif

namespace strata::bench {

GpuPeak currentGpuPeak() {
  std::string name = "unknown";
#ifdef STRATA_WITH_CUDA
  name = at::cuda::getCurrentDeviceProperties()->name;
#endif
  // First match wins: the PCIe H100 before the SXM one.
  static const std::vector<std::pair<std::string, double>> kPeaks = {
      {"H100 PCIe", 756e12}, {"H100", 989.4e12}, {"H200", 989.4e12}, {"A100", 312e12}};
  for (const auto& [model, peak] : kPeaks) {
    if (name.find(model) != std::string::npos)
      return {name, peak, model + " dense bf16 tensor-core peak, NVIDIA datasheet"};
  }
  return {name, 0, "not in bench_gpu's table"};
}

}  // namespace strata::bench
