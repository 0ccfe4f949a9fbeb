#include "strata/train/device.h"

#include <torch/cuda.h>

#ifdef STRATA_WITH_CUDA
#include <c10/cuda/CUDAFunctions.h>
#endif

#include "strata/error.h"

namespace strata::train {

c10::Device trainingDevice(const std::string& device, int localRank) {
  if (device != "cuda") return c10::Device(c10::kCPU);
#ifdef STRATA_WITH_CUDA
  int64_t gpus = static_cast<int64_t>(torch::cuda::device_count());
  if (localRank >= gpus) {
    throw ConfigError("train.device cuda: local rank " + std::to_string(localRank) + " needs GPU " +
                      std::to_string(localRank) + " but this node has " + std::to_string(gpus) +
                      " (run at most one rank per GPU, or train.device cpu)");
  }
  auto index = static_cast<c10::DeviceIndex>(localRank);
  c10::cuda::set_device(index);
  return c10::Device(c10::kCUDA, index);
#else
  throw ConfigError("train.device cuda: this Strata was built against a LibTorch without CUDA (" +
                    std::string("local rank ") + std::to_string(localRank) +
                    "); use train.device cpu or rebuild against a CUDA LibTorch");
#endif
}

}  // namespace strata::train
