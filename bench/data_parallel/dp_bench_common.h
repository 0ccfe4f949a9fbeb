// Shared pieces of the data-parallel benchmarks: the two MLPs, a fixed batch,
// and a trainer that times steps in one of three synchronisation modes.
#pragma once

#include <torch/torch.h>

#include <memory>
#include <string>
#include <vector>

#include "strata/data_parallel/data_parallel.h"
#include "strata/runtime/communicator.h"

namespace strata::bench {

struct MlpShape {
  std::string name;
  std::vector<int64_t> widths;  // Linear(widths[i], widths[i+1]) with ReLU between
  int64_t batch = 64;           // rows per replica per step
};
MlpShape smallMlp();  // ~2.1M parameters
MlpShape largeMlp();  // ~16.8M parameters

enum class Sync {
  kNone,           // local training only: the ceiling
  kOverlapped,     // bucket all-reduces start during backward
  kAfterBackward,  // the same all-reduces, started only once backward is done
};

class BenchTrainer {
 public:
  // Collective when sync != kNone (DataParallel's construction).
  BenchTrainer(const MlpShape& shape, Communicator& comm, Sync sync);
  void step();
  // Seconds per step over `steps` steps, all ranks starting together.
  double secondsPerStep(int steps);
  int64_t parameterCount() const;

 private:
  Communicator& comm_;
  Sync sync_;
  torch::nn::Sequential model_;
  std::unique_ptr<torch::optim::SGD> optimizer_;
  std::unique_ptr<data_parallel::DataParallel> dp_;
  torch::Tensor inputs_;   // [batch, widths.front()]
  torch::Tensor targets_;  // [batch, widths.back()]
};

// "1024-2048-...": the widths joined for JSON.
std::string describe(const MlpShape& shape);

}  // namespace strata::bench
