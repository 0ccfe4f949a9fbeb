#include "gpu_peer.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "bench_env.h"
#include "strata/util/subprocess.h"

namespace strata::bench {
namespace {

std::string arg(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.17g", value);
  return text;
}
std::string arg(int64_t value) { return std::to_string(value); }

std::vector<std::string> scriptArguments(const train::TrainConfig& c, int warmup, int steps,
                                         const std::string& out) {
  const train::ModelConfig& m = c.model;
  const train::OptimConfig& o = c.train;
  const char* python = std::getenv("STRATA_PYTHON");
  std::vector<std::string> argv = {python && *python ? python : "python3",
                                   sourceDir() + "/scripts/bench_gpu_pytorch.py"};
  std::vector<std::pair<std::string, std::string>> flags = {{"layers", arg(m.layers)},
                                                            {"hidden", arg(m.hidden)},
                                                            {"heads", arg(m.heads)},
                                                            {"ffn", arg(m.ffn)},
                                                            {"vocab", arg(m.vocab)},
                                                            {"context", arg(m.context)},
                                                            {"batch", arg(o.globalBatch)},
                                                            {"seq", arg(o.seqLen)},
                                                            {"lr", arg(o.lr)},
                                                            {"beta1", arg(o.beta1)},
                                                            {"beta2", arg(o.beta2)},
                                                            {"eps", arg(o.eps)},
                                                            {"weight-decay", arg(o.weightDecay)},
                                                            {"grad-clip", arg(o.gradClip)},
                                                            {"seed", arg(o.seed)},
                                                            {"warmup", std::to_string(warmup)},
                                                            {"steps", std::to_string(steps)},
                                                            {"out", out}};
  for (const auto& [flag, value] : flags) {
    argv.push_back("--" + flag);
    argv.push_back(value);
  }
  return argv;
}

// The script writes "<seconds per step> <last loss> <peak bytes>" to `path`.
PytorchGpuTiming readTiming(const std::string& path) {
  PytorchGpuTiming timing;
  if (!(std::ifstream(path) >> timing.stepSeconds >> timing.lastLoss >> timing.peakBytes) ||
      timing.stepSeconds <= 0) {
    throw std::runtime_error("bench_gpu_pytorch.py left no timing in " + path);
  }
  return timing;
}

}  // namespace

PytorchGpuTiming timePytorchGpuStep(const train::TrainConfig& config, int warmup, int steps) {
  std::string out = "/tmp/strata_bench_gpu_pytorch_" + std::to_string(getpid());
  std::remove(out.c_str());
  SpawnSpec spec;
  spec.argv = scriptArguments(config, warmup, steps, out);
  spec.stdoutFd = STDERR_FILENO;  // our stdout carries only the result lines
  ExitStatus status = waitExit(spawnProcess(spec));
  if (!status.success()) {
    throw std::runtime_error("bench_gpu_pytorch.py failed: " + status.describe());
  }
  PytorchGpuTiming timing = readTiming(out);
  std::remove(out.c_str());
  return timing;
}

}  // namespace strata::bench
