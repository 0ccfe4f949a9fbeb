// The same GPU training step in PyTorch eager Python, timed by
// scripts/bench_gpu_pytorch.py in a child process (the interpreter named by
// STRATA_PYTHON, default the `python3` on PATH: on the GPU machine, the one
// with CUDA PyTorch), so the two are measured in one run on one GPU.
//
// timePytorchGpuStep blocks until the script has built the model, run
// `warmup` untimed steps and `steps` timed ones; it throws
// std::runtime_error naming the exit status when the script fails or writes
// no timing. The script's own output goes to stderr.
#pragma once

#include <cstdint>

#include "strata/config/config.h"

namespace strata::bench {

struct PytorchGpuTiming {
  double stepSeconds = 0;  // mean over the timed steps
  double lastLoss = 0;
  double peakBytes = 0;  // torch.cuda.max_memory_allocated()
};

PytorchGpuTiming timePytorchGpuStep(const train::TrainConfig& config, int warmup, int steps);

}  // namespace strata::bench
