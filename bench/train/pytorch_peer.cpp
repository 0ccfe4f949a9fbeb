#include "pytorch_peer.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "bench_env.h"
#include "strata/util/subprocess.h"

namespace strata::bench {
namespace {

// Exact text for doubles (std::to_string would print 1e-8 as 0.000000).
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
  std::vector<std::pair<std::string, std::string>> flags = {{"layers", arg(m.layers)},
                                                            {"hidden", arg(m.hidden)},
                                                            {"heads", arg(m.heads)},
                                                            {"ffn", arg(m.ffn)},
                                                            {"vocab", arg(m.vocab)},
                                                            {"context", arg(m.context)},
                                                            {"tied", m.tiedEmbeddings ? "1" : "0"},
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
  std::vector<std::string> argv = {"/usr/bin/python3",
                                   sourceDir() + "/scripts/bench_train_pytorch.py"};
  for (const auto& [flag, value] : flags) {
    argv.push_back("--" + flag);
    argv.push_back(value);
  }
  return argv;
}

// The script writes "<seconds per step> <last loss>" to `path`.
PytorchTiming readTiming(const std::string& path) {
  PytorchTiming timing;
  if (!(std::ifstream(path) >> timing.stepSeconds >> timing.lastLoss) || timing.stepSeconds <= 0) {
    throw std::runtime_error("bench_train_pytorch.py left no timing in " + path);
  }
  return timing;
}

}  // namespace

PytorchTiming timePytorchStep(const train::TrainConfig& config, int warmup, int steps) {
  std::string out = "/tmp/strata_bench_train_pytorch_" + std::to_string(getpid());
  std::remove(out.c_str());
  SpawnSpec spec;
  spec.argv = scriptArguments(config, warmup, steps, out);
  spec.setEnv = {{"OMP_NUM_THREADS", "1"}};
  spec.stdoutFd = STDERR_FILENO;  // our stdout carries only the result lines
  ExitStatus status = waitExit(spawnProcess(spec));
  if (!status.success()) {
    throw std::runtime_error("bench_train_pytorch.py failed: " + status.describe());
  }
  PytorchTiming timing = readTiming(out);
  std::remove(out.c_str());
  return timing;
}

}  // namespace strata::bench
