#include "gpu_peer.h"

#include <cstdlib>

#include "gpt_python_peer.h"

namespace strata::bench {

PytorchGpuTiming timePytorchGpuStep(const train::TrainConfig& config, int warmup, int steps) {
  const char* python = std::getenv("STRATA_PYTHON");
  GptPythonPeer peer{python && *python ? python : "python3", "bench_gpu_pytorch.py", false, {}};
  // The script writes "<seconds per step> <last loss> <peak bytes>".
  std::vector<double> values = runGptPythonPeer(peer, config, warmup, steps, 3);
  return {values[0], values[1], values[2]};
}

}  // namespace strata::bench
