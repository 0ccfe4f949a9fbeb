// Tensor-parallel speedup of a wide MLP block (hidden 2048, FFN 8192),
// forward + backward, on 2 processes (tp = 2, one thread each) against the
// same block on 1 process, measured side by side in one run: rank 0 times
// the serial block while rank 1 waits, then both time the parallel one.
//
// Communication: the bytes handed to collectives per step (per rank), the
// time spent inside them (measured_comm_s), and the alpha-beta prediction
// calls * alpha + bytes * beta (predicted_comm_s), with alpha and beta
// measured in this run from a 4-byte and a 16 MiB all-reduce.
//
// Prints one JSON line (rank 0):
// {"bench":"tp_speedup","tp":2,"hidden":2048,"tokens":...,"speedup":...,
//  "bytes_per_step":...,"predicted_comm_s":...,"measured_comm_s":...}
#include <torch/torch.h>

#include <chrono>
#include <iostream>
#include <nlohmann/json.hpp>

#include "bench_ranks.h"
#include "counting_communicator.h"
#include "strata/runtime/world.h"
#include "strata/tensor_parallel/parallel_mlp.h"
#include "strata/util/json.h"

namespace strata::bench {
namespace {

using Clock = std::chrono::steady_clock;
using tensor_parallel::ParallelMLP;
using tensor_parallel::ParallelMLPOptions;

constexpr int64_t kHidden = 2048, kFfn = 8192, kSeq = 256, kBatch = 1;
constexpr int kWarmup = 1, kSteps = 5;

double since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// One training step's compute: Y = MLP(X), backward of sum(Y * G).
void step(ParallelMLP& mlp, const at::Tensor& x, const at::Tensor& g) {
  mlp->zero_grad();
  at::Tensor input = x.detach().requires_grad_();
  (mlp(input) * g).sum().backward();
}

// Seconds per step, averaged over kSteps after kWarmup.
double secondsPerStep(ParallelMLP& mlp, const at::Tensor& x, const at::Tensor& g,
                      CountingCommunicator* counter) {
  for (int i = 0; i < kWarmup; ++i) step(mlp, x, g);
  if (counter) counter->reset();
  auto start = Clock::now();
  for (int i = 0; i < kSteps; ++i) step(mlp, x, g);
  return since(start) / kSteps;
}

// Mean seconds of an all-reduce of `elements` floats.
double allReduceSeconds(Communicator& comm, int64_t elements, int repeats) {
  at::Tensor t = at::ones({elements});
  comm.allReduce(t);
  auto start = Clock::now();
  for (int i = 0; i < repeats; ++i) comm.allReduce(t);
  return since(start) / repeats;
}

int runRank() {
  at::set_num_threads(1);
  auto world = World::init();
  auto tp = std::make_shared<CountingCommunicator>(world->worldComm());
  auto solo = world->newGroup("solo" + std::to_string(world->rank()), {world->rank()});
  ParallelMLPOptions options{kHidden, kFfn, false, {1234, 0.02, 0.0}};
  at::Tensor x = tensor_parallel::seededNormal({kSeq, kBatch, kHidden}, 1, 1.0);
  at::Tensor g = tensor_parallel::seededNormal({kSeq, kBatch, kHidden}, 2, 1.0);

  double serialStep = 0;
  if (world->rank() == 0) {
    ParallelMLP serial(options, solo);
    serialStep = secondsPerStep(serial, x, g, nullptr);
  }
  world->comm().barrier();

  ParallelMLP parallel(options, tp);
  double parallelStep = secondsPerStep(parallel, x, g, tp.get());
  double bytesPerStep = double(tp->bytes()) / kSteps;
  double callsPerStep = double(tp->calls()) / kSteps;
  double measuredComm = tp->seconds() / kSteps;

  // T(n) = alpha + beta * n for an all-reduce of n bytes.
  double alpha = allReduceSeconds(world->comm(), 1, 200);
  int64_t largeElements = int64_t{4} << 20;  // 16 MiB
  double beta = (allReduceSeconds(world->comm(), largeElements, 5) - alpha) / (4.0 * largeElements);
  double predictedComm = callsPerStep * alpha + bytesPerStep * beta;

  if (world->rank() == 0) {
    std::cerr << "serial step " << serialStep << " s, tp=2 step " << parallelStep << " s, "
              << callsPerStep << " collectives per step, alpha " << alpha << " s, beta " << beta
              << " s/byte\n";
    emitJson({{"bench", "tp_speedup"},
              {"tp", 2},
              {"hidden", kHidden},
              {"tokens", kSeq * kBatch},
              {"speedup", jsonNumber(serialStep / parallelStep)},
              {"bytes_per_step", int64_t(bytesPerStep)},
              {"predicted_comm_s", jsonNumber(predictedComm)},
              {"measured_comm_s", jsonNumber(measuredComm)}});
  }
  world->comm().barrier();
  return 0;
}

}  // namespace
}  // namespace strata::bench

int main(int argc, char** argv) {
  try {
    if (strata::bench::spawnRanksIfParent(2, argv, {}, std::chrono::seconds(300))) return 0;
    return strata::bench::runRank();
  } catch (const std::exception& error) {
    std::cerr << "bench_tp: " << error.what() << "\n";
    return 1;
  }
}
