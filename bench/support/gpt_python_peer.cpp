#include "gpt_python_peer.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <stdexcept>

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

std::vector<std::string> scriptArguments(const GptPythonPeer& peer, const train::TrainConfig& c,
                                         int warmup, int steps, const std::string& out) {
  const train::ModelConfig& m = c.model;
  const train::OptimConfig& o = c.train;
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
  if (peer.passesTiedEmbeddings) flags.emplace_back("tied", m.tiedEmbeddings ? "1" : "0");
  std::vector<std::string> argv = {peer.python, sourceDir() + "/scripts/" + peer.script};
  for (const auto& [flag, value] : flags) {
    argv.push_back("--" + flag);
    argv.push_back(value);
  }
  return argv;
}

std::vector<double> readValues(const GptPythonPeer& peer, const std::string& path, int values) {
  std::ifstream in(path);
  std::vector<double> read(static_cast<size_t>(values));
  for (double& value : read) {
    if (!(in >> value)) {
      throw std::runtime_error(peer.script + " left fewer than " + std::to_string(values) +
                               " numbers in " + path);
    }
  }
  if (read.front() <= 0) throw std::runtime_error(peer.script + " timed no step in " + path);
  return read;
}

}  // namespace

std::vector<double> runGptPythonPeer(const GptPythonPeer& peer, const train::TrainConfig& config,
                                     int warmup, int steps, int values) {
  std::string out = "/tmp/strata_bench_peer_" + std::to_string(getpid());
  std::remove(out.c_str());
  SpawnSpec spec;
  spec.argv = scriptArguments(peer, config, warmup, steps, out);
  spec.setEnv = peer.environment;
  spec.stdoutFd = STDERR_FILENO;  // our stdout carries only the result lines
  ExitStatus status = waitExit(spawnProcess(spec));
  if (!status.success()) throw std::runtime_error(peer.script + " failed: " + status.describe());
  std::vector<double> read = readValues(peer, out, values);
  std::remove(out.c_str());
  return read;
}

}  // namespace strata::bench
