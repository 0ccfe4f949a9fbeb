#include "gpu_peer.h"

#include "bench_env.h"
#include "gpt_python_peer.h"

namespace strata::bench {

PytorchGpuTiming timePytorchGpuStep(const train::TrainConfig& config, int warmup, int steps) {
  GptPythonPeer peer{peerPython(), "bench_gpu_pytorch.py", false, {}};
  // The script writes "<seconds per step> <last loss> <peak bytes>".
  std::vector<double> values = runGptPythonPeer(peer, config, warmup, steps, 3);
  return {values[0], values[1], values[2]};
}

}  // namespace strata::bench
