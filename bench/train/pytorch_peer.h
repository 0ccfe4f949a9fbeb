// The same GPT training step in Python PyTorch, timed by
// scripts/bench_train_pytorch.py in a child process (/usr/bin/python3 with
// Debian's torch, one thread), so the two can be measured alternately in one
// run.
//
// timePytorchStep blocks until the script has built the model, run `warmup`
// untimed steps and `steps` timed ones (tens of seconds for a large model);
// it throws std::runtime_error naming the exit status when the script fails
// or writes no timing. The script's own output goes to stderr.
#pragma once

#include "strata/config/config.h"

namespace strata::bench {

struct PytorchTiming {
  double stepSeconds = 0;  // mean over the timed steps
  double lastLoss = 0;
};

PytorchTiming timePytorchStep(const train::TrainConfig& config, int warmup, int steps);

}  // namespace strata::bench
