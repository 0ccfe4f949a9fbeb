// ZeRO-3 (fully sharded) against ZeRO-1 on two local ranks, one thread each,
// on the 17M-parameter MLP (one unit per Linear), AdamW on flat shards.
//
// zero3_overhead: step time of both, rounds interleaved;
//   ratio = median over rounds of (step_s / zero1_step_s),
//   gather_hidden_fraction = 1 - (gather wait with prefetch 1) / (with prefetch 0):
//   with no prefetch every gather is waited for in full, so that wait is the
//   gather time, and what prefetch removes from it is hidden behind compute.
// zero3_memory, once at prefetch 0 and once at prefetch 1: model-state bytes
//   one rank holds at most (AdamW's state shards, plus the most
//   FullyShardedDataParallel ever held at once: parameter shards, gradient
//   shards, which exist from their unit's reduce-scatter to zeroGrad(),
//   gathered units, full gradients, reduce-scatter buffers in flight)
//   against the goal (parameters + gradients + AdamW state) / dp +
//   the largest unit, and against this design's bound: the goal, plus the
//   unit's full gradient (a Linear's backward makes its weight gradient while
//   its weight is still gathered), plus per prefetched unit that unit
//   gathered and one reduce-scatter in flight (its full input and its
//   shard-sized output); the most tensor memory live during a step (counted at
//   LibTorch's allocator: activations and the batch too); and the process's
//   peak resident growth while training (monotone: each line's is the most
//   up to then) under ZeRO-3 and then under plain data parallelism (torch
//   AdamW).
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <vector>

#include "bench_ranks.h"
#include "bench_stats.h"
#include "dp_bench_common.h"
#include "strata/data_parallel/fully_sharded.h"
#include "strata/data_parallel/fully_sharded_optimizer.h"
#include "strata/data_parallel/zero_optimizer.h"
#include "strata/report/tensor_memory.h"
#include "strata/runtime/world.h"
#include "strata/util/json.h"

namespace {

using namespace strata;
using namespace strata::data_parallel;

constexpr int kWarmupSteps = 2;
constexpr int kRounds = 7;
constexpr int kStepsPerRound = 4;
std::unique_ptr<FlatOptimizer> adamW() { return std::make_unique<FlatAdamW>(AdamWConfig{}); }

struct Model {
  explicit Model(const bench::MlpShape& shape) {
    torch::manual_seed(1);
    for (size_t i = 0; i + 1 < shape.widths.size(); ++i)
      layers.push_back(torch::nn::Linear(shape.widths[i], shape.widths[i + 1]));
  }
  std::vector<NamedTensor> named() const {
    std::vector<NamedTensor> all;
    for (size_t i = 0; i < layers.size(); ++i)
      for (const auto& item : layers[i]->named_parameters())
        all.push_back({std::to_string(i) + "." + item.key(), item.value()});
    return all;
  }
  std::vector<torch::nn::Linear> layers;
};

class Trainer {
 public:
  virtual ~Trainer() = default;
  virtual void step() = 0;
  double secondsPerStep(Communicator& comm, int steps) {
    comm.barrier();
    auto start = std::chrono::steady_clock::now();
    for (int s = 0; s < steps; ++s) step();
    double local = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    // The slowest rank sets the pace.
    torch::Tensor seconds = torch::tensor({local / steps}, torch::kDouble);
    comm.allReduce(seconds, ReduceOp::kMax);
    return seconds.item<double>();
  }
};

struct Batch {
  Batch(const bench::MlpShape& shape, int rank) {
    torch::manual_seed(2 + rank);
    inputs = torch::randn({shape.batch, shape.widths.front()});  // [batch, in]
    targets = torch::randn({shape.batch, shape.widths.back()});  // [batch, out]
  }
  torch::Tensor inputs, targets;
};

class Zero1 : public Trainer {
 public:
  Zero1(const bench::MlpShape& shape, Communicator& comm)
      : model_(shape), batch_(shape, comm.rank()), dp_(model_.named(), comm), zero_(dp_, adamW()) {}
  void step() override {
    zero_.zeroGrad();
    torch::Tensor h = batch_.inputs;
    for (size_t i = 0; i < model_.layers.size(); ++i) {
      h = model_.layers[i](h);
      if (i + 1 < model_.layers.size()) h = torch::relu(h);
    }
    torch::mse_loss(h, batch_.targets).backward();
    zero_.step();
  }

 private:
  Model model_;
  Batch batch_;
  DataParallel dp_;
  ZeroOptimizer zero_;
};

std::vector<ShardedUnit> unitsOf(const Model& model) {
  std::vector<ShardedUnit> units;
  for (size_t i = 0; i < model.layers.size(); ++i) {
    std::vector<NamedTensor> params;
    for (const auto& item : model.layers[i]->named_parameters())
      params.push_back({item.key(), item.value()});
    units.push_back({"linear" + std::to_string(i), params});
  }
  return units;
}

class Zero3 : public Trainer {
 public:
  Zero3(const bench::MlpShape& shape, Communicator& comm, int prefetch)
      : model_(shape),
        batch_(shape, comm.rank()),
        fsdp_(unitsOf(model_), comm, optionsWith(prefetch)),
        optimizer_(fsdp_, adamW()) {}
  void step() override {
    optimizer_.zeroGrad();
    torch::Tensor h = batch_.inputs;
    int last = static_cast<int>(model_.layers.size()) - 1;
    for (int i = 0; i <= last; ++i) {
      h = fsdp_.forward(i, [&] {
        torch::Tensor y = model_.layers[i](h);
        return i < last ? torch::relu(y) : y;
      });
    }
    torch::mse_loss(h, batch_.targets).backward();
    optimizer_.step();
  }
  int64_t optimizerStateBytes() const { return optimizer_.stateBytes(); }
  int64_t largestUnitBytes() const {
    int64_t largest = 0;
    for (int u = 0; u < fsdp_.numUnits(); ++u)
      largest = std::max(largest, fsdp_.layout(u).totalNumel() * 4);
    return largest;
  }
  const FullyShardedDataParallel& replicas() const { return fsdp_; }

 private:
  static FullyShardedOptions optionsWith(int prefetch) {
    FullyShardedOptions options;
    options.prefetch = prefetch;
    return options;
  }
  Model model_;
  Batch batch_;
  FullyShardedDataParallel fsdp_;
  FullyShardedOptimizer optimizer_;
};

// Plain data parallelism, torch's AdamW: the memory baseline.
class Replicated : public Trainer {
 public:
  Replicated(const bench::MlpShape& shape, Communicator& comm)
      : model_(shape), batch_(shape, comm.rank()), dp_(model_.named(), comm) {
    std::vector<torch::Tensor> params;
    for (const NamedTensor& p : model_.named()) params.push_back(p.tensor);
    optimizer_ = std::make_unique<torch::optim::AdamW>(params);
  }
  void step() override {
    dp_.zeroGrad();
    torch::Tensor h = batch_.inputs;
    for (size_t i = 0; i < model_.layers.size(); ++i) {
      h = model_.layers[i](h);
      if (i + 1 < model_.layers.size()) h = torch::relu(h);
    }
    torch::mse_loss(h, batch_.targets).backward();
    dp_.finishGradientSync();
    optimizer_->step();
  }

 private:
  Model model_;
  Batch batch_;
  DataParallel dp_;
  std::unique_ptr<torch::optim::AdamW> optimizer_;
};

int64_t residentBytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * 4096;
}

int64_t peakResidentBytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<int64_t>(usage.ru_maxrss) * 1024;
}

void measureOverhead(const bench::MlpShape& shape, Communicator& comm) {
  Zero1 zero1(shape, comm);
  Zero3 zero3(shape, comm, 1);
  Zero3 unprefetched(shape, comm, 0);
  zero1.secondsPerStep(comm, kWarmupSteps);
  zero3.secondsPerStep(comm, kWarmupSteps);
  unprefetched.secondsPerStep(comm, kWarmupSteps);
  double waitBefore = zero3.replicas().gatherWaitSeconds();
  double unprefetchedBefore = unprefetched.replicas().gatherWaitSeconds();
  std::vector<double> steps, zero1Steps, ratios;
  for (int round = 0; round < kRounds; ++round) {
    steps.push_back(zero3.secondsPerStep(comm, kStepsPerRound));
    zero1Steps.push_back(zero1.secondsPerStep(comm, kStepsPerRound));
    unprefetched.secondsPerStep(comm, kStepsPerRound);
    ratios.push_back(steps.back() / zero1Steps.back());
  }
  double wait = zero3.replicas().gatherWaitSeconds() - waitBefore;
  double fullWait = unprefetched.replicas().gatherWaitSeconds() - unprefetchedBefore;
  if (comm.rank() != 0) return;
  bench::emitJson({{"bench", "zero3_overhead"},
                   {"dp", comm.size()},
                   {"model", bench::describe(shape)},
                   {"step_s", jsonNumber(bench::median(steps))},
                   {"zero1_step_s", jsonNumber(bench::median(zero1Steps))},
                   {"ratio", jsonNumber(bench::median(ratios))},
                   {"gather_hidden_fraction",
                    jsonNumber(fullWait > 0 ? std::max(0.0, 1 - wait / fullWait) : 0.0)}});
}

struct Zero3Memory {
  int64_t params = 0;
  int64_t optimizerState = 0;
  int64_t held = 0;      // peak, FullyShardedDataParallel's own count
  int64_t gathered = 0;  // peak, gathered parameters only
  int64_t largestUnit = 0;
  int64_t tensorPeak = 0;  // the allocator's count over steady steps
};

Zero3Memory measureZero3Memory(const bench::MlpShape& shape, Communicator& comm, int prefetch) {
  Zero3Memory m;
  Zero3 zero3(shape, comm, prefetch);
  // The first step has no prefetch plan yet and makes AdamW's state.
  zero3.secondsPerStep(comm, 1);
  train::resetPeakTensorBytes();
  zero3.secondsPerStep(comm, kStepsPerRound);
  m.tensorPeak = train::peakTensorBytes();
  const FullyShardedDataParallel& fsdp = zero3.replicas();
  for (int u = 0; u < fsdp.numUnits(); ++u) m.params += fsdp.layout(u).totalNumel();
  m.optimizerState = zero3.optimizerStateBytes();
  m.held = fsdp.peakHeldBytes();
  m.gathered = fsdp.peakGatheredBytes();
  m.largestUnit = zero3.largestUnitBytes();
  return m;
}

nlohmann::ordered_json memoryLine(const bench::MlpShape& shape, Communicator& comm, int prefetch,
                                  const Zero3Memory& m) {
  // 4 bytes each of parameter, gradient, and AdamW's two moments.
  int64_t goal = 16 * m.params / comm.size() + m.largestUnit;
  int64_t modelState = m.optimizerState + m.held;
  int64_t overlap = m.largestUnit + m.largestUnit + m.largestUnit / comm.size();
  int64_t bound = goal + m.largestUnit + prefetch * overlap;
  return {{"bench", "zero3_memory"},
          {"dp", comm.size()},
          {"model", bench::describe(shape)},
          {"params", m.params},
          {"prefetch", prefetch},
          {"model_state_bytes_per_rank", modelState},
          {"optimizer_state_bytes", m.optimizerState},
          {"fsdp_held_peak_bytes", m.held},
          {"gathered_peak_bytes", m.gathered},
          {"largest_unit_bytes", m.largestUnit},
          {"goal_bytes", goal},
          {"goal_ratio", jsonNumber(static_cast<double>(modelState) / static_cast<double>(goal))},
          {"within_goal_10pct", modelState * 10 <= goal * 11},
          {"bound_bytes", bound},
          {"within_bound", modelState <= bound},
          {"tensor_peak_bytes", m.tensorPeak}};
}

// Runs first in the process, so the resident peaks are this run's.
void measureMemory(const bench::MlpShape& shape, Communicator& comm) {
  int64_t base = residentBytes();
  std::vector<nlohmann::ordered_json> lines;
  for (int prefetch : {0, 1}) {
    Zero3Memory m = measureZero3Memory(shape, comm, prefetch);
    lines.push_back(memoryLine(shape, comm, prefetch, m));
    lines.back()["peak_bytes"] = peakResidentBytes() - base;
  }
  {
    Replicated replicated(shape, comm);
    replicated.secondsPerStep(comm, kStepsPerRound);
  }
  int64_t replicatedPeak = peakResidentBytes() - base;
  if (comm.rank() != 0) return;
  for (nlohmann::ordered_json& line : lines) {
    line["ddp_peak_bytes"] = std::max(replicatedPeak, line["peak_bytes"].get<int64_t>());
    bench::emitJson(line);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (bench::spawnRanksIfParent(2, argv)) return 0;
  torch::set_num_threads(1);
  train::installTensorMemoryCounter();
  auto world = World::init();
  measureMemory(bench::largeMlp(), world->comm());
  measureOverhead(bench::largeMlp(), world->comm());
  return 0;
}
