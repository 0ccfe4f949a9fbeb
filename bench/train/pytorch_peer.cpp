#include "pytorch_peer.h"

#include "bench_env.h"
#include "gpt_python_peer.h"

namespace strata::bench {

PytorchTiming timePytorchStep(const train::TrainConfig& config, int warmup, int steps) {
  GptPythonPeer peer{peerPython(), "bench_train_pytorch.py", true, {{"OMP_NUM_THREADS", "1"}}};
  // The script writes "<seconds per step> <last loss>".
  std::vector<double> values = runGptPythonPeer(peer, config, warmup, steps, 2);
  return {values[0], values[1]};
}

}  // namespace strata::bench
