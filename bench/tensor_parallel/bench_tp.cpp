// Tensor-parallel speedup of a wide MLP block (hidden 2048, FFN 8192),
// forward + backward, on 2 processes (tp = 2, one thread each) against the
// same block on 1 process, measured side by side in one run: rank 0 times
// the serial block while rank 1 waits, then both time the parallel one.
//
// Communication: the bytes handed to collectives per step (per rank), the
// time spent inside them (measured_comm_s), and the planner's prediction
// (predicted_comm_s, strata/plan/comm.h): the collectives' alpha-beta cost,
// beta measured in this run from a 4-byte and a 16 MiB all-reduce, alpha
// from the noise probes' all-reduce of the block's size right after compute,
// plus their wait for the rank behind: syncWaitSeconds of the
// compute before each (the step less its communication, a third before the
// forward's all-reduce, two before the backward's) by this machine's compute
// noise, fitted in this run to the waits after other work (plain matmuls of
// two lengths between all-reduces, sync_wait.h). measured_comm_s is the mean
// of both ranks, as the model's wait is; each rank's is printed too (one
// rank waiting far more than the other shows a lasting difference between
// them). On two shared cores the wait is most of it.
//
// Prints one JSON line (rank 0):
// {"bench":"tp_speedup","tp":2,"hidden":2048,"tokens":...,"speedup":...,
//  "bytes_per_step":...,"predicted_comm_s":...,"measured_comm_s":...,
//  "measured_comm_by_rank_s":[...,...],
//  "predicted_transfer_s":...,"predicted_wait_s":...,"compute_spread":...,"compute_jitter_ms":...,
//  "comm_error":...}  (comm_error = predicted / measured - 1)
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <nlohmann/json.hpp>

#include "bench_ranks.h"
#include "counting_communicator.h"
#include "strata/plan/comm.h"
#include "strata/runtime/world.h"
#include "strata/tensor_parallel/parallel_mlp.h"
#include "strata/util/json.h"
#include "sync_wait.h"

namespace strata::bench {
namespace {

using Clock = std::chrono::steady_clock;
using tensor_parallel::ParallelMLP;
using tensor_parallel::ParallelMLPOptions;

constexpr int64_t kHidden = 2048, kFfn = 8192, kSeq = 256, kBatch = 1;
// The parallel block runs in kRounds rounds of kStepsPerRound steps, each
// followed by a probe of the compute spread, so that the steps and the probes
// see the same load of this shared machine. 16 rounds: with 8, the measured
// and the predicted waits each swung by a factor of two between runs.
constexpr int kWarmup = 1, kRounds = 16, kStepsPerRound = 3, kNoiseRuns = 8;
constexpr int kSteps = kRounds * kStepsPerRound, kSerialSteps = 24;
// The block's all-reduces: activations [seq, batch, hidden] in float32.
constexpr int64_t kMessageBytes = kSeq * kBatch * kHidden * 4;

double since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// One training step's compute: Y = MLP(X), backward of sum(Y * G).
void step(ParallelMLP& mlp, const at::Tensor& x, const at::Tensor& g) {
  mlp->zero_grad();
  at::Tensor input = x.detach().requires_grad_();
  (mlp(input) * g).sum().backward();
}

// Seconds of `steps` steps.
double timeSteps(ParallelMLP& mlp, const at::Tensor& x, const at::Tensor& g, int steps) {
  auto start = Clock::now();
  for (int i = 0; i < steps; ++i) step(mlp, x, g);
  return since(start);
}

// This machine's compute noise, from other work than the block's: a
// [256, 2048] x [2048, 2048] matmul (a quarter of the shard's forward) and
// four of them, each followed by an all-reduce of the block's size, whose
// time from the last arrival is the transfer right after compute.
struct NoiseProbes {
  std::vector<SyncProbe> shorter, longer;
  void probe(Communicator& comm) {
    at::Tensor a = tensor_parallel::seededNormal({kSeq, kHidden}, 3, 1.0);
    at::Tensor b = tensor_parallel::seededNormal({kHidden, kHidden}, 4, 1.0);
    shorter.push_back(probeSyncWait(
        comm, [&] { at::mm(a, b); }, kMessageBytes, kNoiseRuns));
    longer.push_back(probeSyncWait(
        comm,
        [&] {
          for (int i = 0; i < 4; ++i) at::mm(a, b);
        },
        kMessageBytes, kNoiseRuns));
  }
  plan::ComputeNoise fit(int ranks) const {
    return fitComputeNoise(pooled(shorter), pooled(longer), ranks);
  }
  double transferSeconds() const {
    std::vector<SyncProbe> all = shorter;
    all.insert(all.end(), longer.begin(), longer.end());
    return pooled(all).transferSeconds;
  }
};

struct ParallelRun {
  double stepSeconds = 0;
  double commSeconds = 0;  // per step, the mean over the ranks
  std::vector<double> commSecondsByRank;
  plan::ComputeNoise noise;
  double transferSeconds = 0;  // one all-reduce of the block's size right after compute
};

// The tp = 2 block's seconds per step, its rounds interleaved with the noise
// probes; `counter` counts the steps' collectives only.
ParallelRun timeParallel(ParallelMLP& mlp, const at::Tensor& x, const at::Tensor& g,
                         CountingCommunicator& counter, Communicator& world) {
  for (int i = 0; i < kWarmup; ++i) step(mlp, x, g);
  counter.reset();
  double seconds = 0;
  NoiseProbes probes;
  for (int round = 0; round < kRounds; ++round) {
    seconds += timeSteps(mlp, x, g, kStepsPerRound);
    probes.probe(world);
  }
  // Each rank's seconds per step in collectives, in its own slot.
  at::Tensor comm = torch::zeros({world.size()}, torch::kDouble);
  comm[world.rank()] = counter.seconds() / kSteps;
  world.allReduce(comm);
  std::vector<double> byRank(comm.data_ptr<double>(), comm.data_ptr<double>() + world.size());
  return {seconds / kSteps, comm.mean().item<double>(), byRank, probes.fit(world.size()),
          probes.transferSeconds()};
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
    for (int i = 0; i < kWarmup; ++i) step(serial, x, g);
    serialStep = timeSteps(serial, x, g, kSerialSteps) / kSerialSteps;
  }
  world->comm().barrier();

  ParallelMLP parallel(options, tp);
  auto [parallelStep, measuredComm, commByRank, noise, transferAfterCompute] =
      timeParallel(parallel, x, g, *tp, world->comm());
  double bytesPerStep = double(tp->bytes()) / kSteps;
  double callsPerStep = double(tp->calls()) / kSteps;

  // T(n) = alpha + beta * n for an all-reduce of n bytes; as the planner's
  // link of a 2-rank ring (n / bandwidth + 2 latency): beta from a 4-byte and
  // a 16 MiB all-reduce back to back, alpha from the probes' all-reduce
  // right after compute (its buffers no longer in cache).
  double idleAlpha = allReduceSeconds(world->comm(), 1, 200);
  int64_t largeElements = int64_t{4} << 20;  // 16 MiB
  double beta =
      (allReduceSeconds(world->comm(), largeElements, 5) - idleAlpha) / (4.0 * largeElements);
  double alpha = std::max(idleAlpha, transferAfterCompute - beta * kMessageBytes);
  plan::Link link{1 / beta, alpha / 2};
  double transfer = callsPerStep * plan::allReduceSeconds(bytesPerStep / callsPerStep, 2, link);
  // The forward's all-reduce follows a third of the step's compute, the
  // backward's the other two thirds (twice the forward's FLOPs).
  double compute = parallelStep - measuredComm;
  double wait = plan::syncWaitSeconds(compute / 3, 2, noise) +
                plan::syncWaitSeconds(2 * compute / 3, 2, noise);
  double predictedComm = transfer + wait;

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
              {"measured_comm_s", jsonNumber(measuredComm)},
              {"measured_comm_by_rank_s", {jsonNumber(commByRank[0]), jsonNumber(commByRank[1])}},
              {"predicted_transfer_s", jsonNumber(transfer)},
              {"predicted_wait_s", jsonNumber(wait)},
              {"compute_spread", jsonNumber(noise.spread)},
              {"compute_jitter_ms", jsonNumber(noise.jitter * 1e3)},
              {"comm_error", jsonNumber(predictedComm / measuredComm - 1)}});
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
