// A GPT training step timed by a Python peer script in a child process, so
// Strata and PyTorch eager can be measured alternately in one run. The
// peers (scripts/bench_train_pytorch.py on the CPU, bench_gpu_pytorch.py on
// a GPU) take the model and optimizer as flags and write whitespace-separated
// numbers to the file named by --out.
//
// runGptPythonPeer blocks until the script has built the model and run
// `warmup` untimed and `steps` timed steps; it throws std::runtime_error
// naming the script and the exit status when it fails, or when it writes
// fewer than `values` numbers or a step time <= 0. The script's own output
// goes to stderr: a bench's stdout carries only its result lines.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "strata/config/config.h"

namespace strata::bench {

struct GptPythonPeer {
  std::string python;  // the interpreter
  std::string script;  // under scripts/ of the source tree
  bool passesTiedEmbeddings = false;
  std::map<std::string, std::string> environment;  // set for the script
};

// The numbers the script wrote, the first of them its seconds per step.
std::vector<double> runGptPythonPeer(const GptPythonPeer& peer, const train::TrainConfig& config,
                                     int warmup, int steps, int values);

}  // namespace strata::bench
