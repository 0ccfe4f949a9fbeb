// Pipeline benchmarks: four processes (one thread each) train an MLP of 16
// equal blocks with every schedule (8 micro-batches: gpipe, 1f1b,
// interleaved-1f1b with 2 chunks, zb-h1, zb-v, dualpipe-v) and compare with
//  - ideal_s: the simulator's makespan for the schedule fed with the compute
//    durations measured in this same run, zero communication cost;
//  - one process training the same model on the same global batch, timed on
//    rank 0 just before each schedule while the other ranks wait (so both
//    sides of the ratio see the same machine state).
// Each schedule's peak stashed activations (largest over ranks), the
// simulated and measured bubbles, and ZB-V's simulated bubble against
// 1F1B's; then an equal-count cut vs the profiled automatic cut of a model
// with one layer 10x heavier.
// Four workers on two cores share them: every rank's compute times are
// measured under that sharing, and the simulator is fed with them; a rank's
// bubble is then mostly another rank's compute. The schedules run again on
// two processes, a core each (pp 2, 2 x 2 stages in the V), where a bubble is
// idle time; each line's "pp" says which run it is.
// Set STRATA_TRACE_DIR to also write measured and simulated 1F1B timelines
// (SVG and Chrome trace) side by side.
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>

#include "bench_ranks.h"
#include "heavy_first_model.h"
#include "strata/pipeline/pipeline.h"
#include "strata/pipeline/trace.h"
#include "strata/runtime/world.h"
#include "strata/schedule/chrome_trace.h"
#include "strata/schedule/registry.h"
#include "strata/schedule/simulator.h"
#include "strata/schedule/svg.h"
#include "strata/util/json.h"

namespace {

using namespace strata;
using namespace strata::pipeline;

// Four workers share this machine's two cores: the layout the figures use.
// Then two, a core each, where a rank's bubble is idle time rather than
// another rank's compute.
constexpr int kSharedCoreRanks = 4;
constexpr int kOwnCoreRanks = 2;
constexpr int kMicrobatches = 8;
constexpr int kBlocks = 16;  // 16 stages of 1 block at pp 4 x 2 chunks
constexpr int64_t kWidth = 512;
constexpr int64_t kHeavyWidth = 512;
constexpr int64_t kMicrobatchRows = 64;
constexpr int64_t kBatch = kMicrobatches * kMicrobatchRows;
constexpr int kWarmupSteps = 2;
constexpr int kTimedSteps = 8;

using Clock = std::chrono::steady_clock;

// relu(W x + b): one pipeline layer.
struct LinearReluImpl : torch::nn::Module {
  explicit LinearReluImpl(int64_t width)
      : linear(register_module("linear", torch::nn::Linear(width, width))) {}
  torch::Tensor forward(const torch::Tensor& x) { return torch::relu(linear(x)); }
  torch::nn::Linear linear;
};
TORCH_MODULE(LinearRelu);

// 16 equal blocks, so that every cut the schedules make (4 or 8 stages) is
// balanced.
torch::nn::Sequential makeMlp() {
  torch::manual_seed(0);
  torch::nn::Sequential model;
  for (int i = 0; i < kBlocks; ++i) model->push_back(LinearRelu(kWidth));
  return model;
}

torch::Tensor mse(const torch::Tensor& y, const torch::Tensor& t) { return torch::mse_loss(y, t); }

double seconds(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// The baseline: one process, one thread, the whole batch per step.
double serialStepSeconds() {
  torch::nn::Sequential model = makeMlp();
  torch::optim::SGD optimizer(model->parameters(), 0.01);
  torch::Tensor x = torch::randn({kBatch, kWidth}), t = torch::randn({kBatch, kWidth});
  double total = 0;
  for (int step = 0; step < kWarmupSteps + kTimedSteps; ++step) {
    Clock::time_point start = Clock::now();
    optimizer.zero_grad();
    mse(model->forward(x), t).backward();
    optimizer.step();
    if (step >= kWarmupSteps) total += seconds(start);
  }
  return total / kTimedSteps;
}

struct Measured {
  double stepSeconds = 0;          // mean over timed steps of the slowest rank's step
  std::vector<TraceEvent> events;  // every rank's timed steps, on pp rank 0
  int64_t peakStashBytes = 0;      // largest over ranks
};

// Trains `model` (input and output [rows, width]) with `options`.
Measured runTimed(torch::nn::Sequential model, int64_t width, const ParallelGroups& groups,
                  PipelineOptions options) {
  options.trace = true;
  Pipeline pipe(model, groups, options);
  if (groups.pp->rank() == 0) std::cerr << options.schedule << " cut:\n" << pipe.partitionTable();
  torch::optim::SGD optimizer(pipe.parameters(), 0.01);
  torch::Tensor x = torch::randn({kBatch, width}), t = torch::randn({kBatch, width});
  Measured measured;
  std::vector<TraceEvent> mine;
  for (int step = 0; step < kWarmupSteps + kTimedSteps; ++step) {
    groups.pp->barrier();
    Clock::time_point start = Clock::now();
    optimizer.zero_grad();
    pipe.step(x, t, mse);
    optimizer.step();
    at::Tensor elapsed = torch::full({1}, seconds(start), torch::kFloat64);
    groups.pp->allReduce(elapsed, ReduceOp::kMax);
    if (step < kWarmupSteps) continue;
    measured.stepSeconds += elapsed.item<double>() / kTimedSteps;
    const std::vector<TraceEvent>& events = pipe.lastStep().events;
    mine.insert(mine.end(), events.begin(), events.end());
    measured.peakStashBytes = std::max(measured.peakStashBytes, pipe.lastStep().peakStashBytes);
  }
  at::Tensor peak = torch::full({1}, measured.peakStashBytes, torch::kInt64);
  groups.pp->allReduce(peak, ReduceOp::kMax);
  measured.peakStashBytes = peak.item<int64_t>();
  measured.events = gatherEvents(*groups.pp, mine);
  return measured;
}

// Every timed step records the same number of events per rank, in order, so
// step k is the k-th equal slice of each rank's events.
std::vector<TraceEvent> stepSlice(const std::vector<TraceEvent>& events, int step, int ranks) {
  std::vector<std::vector<TraceEvent>> perRank(ranks);
  for (const TraceEvent& e : events) perRank[e.rank].push_back(e);
  std::vector<TraceEvent> window;
  for (const std::vector<TraceEvent>& rankEvents : perRank) {
    std::size_t n = rankEvents.size() / kTimedSteps;
    window.insert(window.end(), rankEvents.begin() + step * n, rankEvents.begin() + (step + 1) * n);
  }
  return window;
}

// Mean over timed steps and ranks of 1 - busy / step span.
double measuredBubble(const std::vector<TraceEvent>& events, int ranks) {
  double sum = 0;
  for (int step = 0; step < kTimedSteps; ++step) {
    for (double bubble : measuredBubbleFractions(stepSlice(events, step, ranks), ranks))
      sum += bubble;
  }
  return sum / (kTimedSteps * ranks);
}

void writeTimelines(const schedule::Timeline& measured, const schedule::Timeline& simulated) {
  const char* dir = std::getenv("STRATA_TRACE_DIR");
  if (!dir) return;
  std::string base = std::string(dir) + "/pipeline_1f1b_";
  std::ofstream(base + "measured.svg") << schedule::renderSvg(measured, "1F1B measured (ms)");
  std::ofstream(base + "simulated.svg") << schedule::renderSvg(simulated, "1F1B simulated (s)");
  std::ofstream(base + "measured.json") << schedule::toChromeTrace(measured, 1000);
  std::ofstream(base + "simulated.json") << schedule::toChromeTrace(simulated, 1e6);
}

// Rank 0 trains alone while the other ranks wait at the barrier.
double serialStepSecondsOnRoot(const ParallelGroups& groups) {
  double serial = groups.pp->rank() == 0 ? serialStepSeconds() : 0;
  groups.pp->barrier();
  return serial;
}

struct ScheduleRun {
  const char* name;
  int virtualStages;
};

const ScheduleRun kSchedules[] = {{"gpipe", 1}, {"1f1b", 1}, {"interleaved-1f1b", 2},
                                  {"zb-h1", 1}, {"zb-v", 1}, {"dualpipe-v", 1}};

// The simulated bubble of a schedule, in seconds of one rank's idle time.
double bubbleSeconds(const schedule::SimulationResult& result) {
  return result.meanBubbleFraction() * result.makespan;
}

// Every stage at the stages' mean measured costs: the schedule's own bubble,
// without the imbalance four workers sharing two cores put into the
// per-stage times (a stage whose rank computes alone runs faster).
schedule::CostModel meanCosts(const std::vector<schedule::StageCosts>& perStage) {
  schedule::CostModel model;
  model.uniform = {0, 0, 0, 0};
  for (const schedule::StageCosts& c : perStage) {
    model.uniform.forward += c.forward / perStage.size();
    model.uniform.backward += c.backward / perStage.size();
    model.uniform.backwardInput += c.backwardInput / perStage.size();
    model.uniform.backwardWeight += c.backwardWeight / perStage.size();
  }
  return model;
}

void benchSchedules(const ParallelGroups& groups) {
  bool root = groups.pp->rank() == 0;
  int ranks = groups.pp->size();
  std::map<std::string, double> simulatedBubble, meanCostBubble;
  for (const ScheduleRun& run : kSchedules) {
    double serialSeconds = serialStepSecondsOnRoot(groups);
    PipelineOptions options;
    options.schedule = run.name;
    options.microbatches = kMicrobatches;
    options.virtualStages = run.virtualStages;
    Measured measured = runTimed(makeMlp(), kWidth, groups, options);
    if (!root) continue;
    schedule::Schedule plan =
        schedule::generate(run.name, {ranks, kMicrobatches, run.virtualStages});
    schedule::CostModel costs;
    costs.perStage = measuredStageCosts(measured.events, plan.stages());
    schedule::SimulationResult ideal = schedule::simulate(plan, costs);
    simulatedBubble[run.name] = bubbleSeconds(ideal);
    meanCostBubble[run.name] = bubbleSeconds(schedule::simulate(plan, meanCosts(costs.perStage)));
    bench::emitJson({{"bench", "pipeline_efficiency"},
                     {"schedule", run.name},
                     {"pp", ranks},
                     {"microbatches", kMicrobatches},
                     {"measured_s", jsonNumber(measured.stepSeconds)},
                     {"ideal_s", jsonNumber(ideal.makespan)},
                     {"efficiency", jsonNumber(ideal.makespan / measured.stepSeconds)},
                     {"speedup_vs_1proc", jsonNumber(serialSeconds / measured.stepSeconds)}});
    bench::emitJson({{"bench", "pipeline_bubble"},
                     {"schedule", run.name},
                     {"simulated", jsonNumber(ideal.meanBubbleFraction())},
                     {"measured", jsonNumber(measuredBubble(measured.events, ranks))}});
    bench::emitJson({{"bench", "pipeline_memory"},
                     {"schedule", run.name},
                     {"microbatches", kMicrobatches},
                     {"peak_activation_bytes", measured.peakStashBytes}});
    if (std::string(run.name) == "1f1b" && ranks == kSharedCoreRanks) {
      std::vector<TraceEvent> lastStep = stepSlice(measured.events, kTimedSteps - 1, ranks);
      writeTimelines(toTimeline(lastStep, ranks, earliestStart(lastStep)),
                     schedule::toTimeline(ideal));
    }
  }
  // docs/schedules.md: with F = I = W a rank idles 3(p - 1) stage forwards
  // under 1F1B and (p - 1) / 2 under ZB-V (m >= 2p - 1), a factor of 6.
  if (root) {
    bench::emitJson(
        {{"bench", "zb_v_bubble_vs_1f1b"},
         {"pp", ranks},
         {"simulated_1f1b_over_zb_v",
          jsonNumber(simulatedBubble["1f1b"] / simulatedBubble["zb-v"])},
         {"at_mean_stage_costs", jsonNumber(meanCostBubble["1f1b"] / meanCostBubble["zb-v"])},
         {"formula_at_equal_f_i_w", 6}});
  }
}

void benchPartition(const ParallelGroups& groups) {
  for (bool automatic : {false, true}) {
    PipelineOptions options;
    options.schedule = "1f1b";
    options.microbatches = kMicrobatches;
    options.autoPartition = automatic;
    options.profileInput = torch::randn({kMicrobatchRows, kHeavyWidth});
    Measured measured =
        runTimed(strata::testing::heavyFirstModel(0, kHeavyWidth), kHeavyWidth, groups, options);
    if (groups.pp->rank() != 0) continue;
    bench::emitJson({{"bench", "partition_balance"},
                     {"method", automatic ? "auto" : "equal"},
                     {"step_s", jsonNumber(measured.stepSeconds)}});
  }
}

}  // namespace

int main(int argc, char** argv) {
  bool parent = false;
  for (int ranks : {kSharedCoreRanks, kOwnCoreRanks})
    parent = bench::spawnRanksIfParent(ranks, argv, {}, std::chrono::seconds(600)) || parent;
  if (parent) return 0;
  torch::set_num_threads(1);
  auto world = World::init();
  ParallelDegrees degrees;
  degrees.pp = world->size();
  ParallelGroups groups = world->parallelGroups(ParallelLayout(world->size(), degrees));
  benchSchedules(groups);
  if (world->size() == kSharedCoreRanks) benchPartition(groups);
  return 0;
}
