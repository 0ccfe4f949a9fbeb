#include "strata/plan/cost_model.h"

#include <algorithm>
#include <cmath>

#include "fully_sharded_time.h"
#include "rank_memory.h"
#include "stage_costs.h"
#include "strata/plan/comm.h"
#include "strata/plan/errors.h"
#include "strata/schedule/registry.h"

namespace strata::plan {
namespace {

// Bytes the optimizer step moves per parameter it owns: read bf16 weight and
// gradient (4), read and write the fp32 master, momentum and variance (24),
// write the bf16 weight back (2), rounded up for the gradient-norm pass.
constexpr double kOptimizerBytesPerParam = 32;
// Device memory left for the CUDA context, allocator fragmentation and
// communication buffers, which the accounting below does not itemise.
constexpr double kUsableMemoryFraction = 0.9;

// `collective` over `bytes` on `ranks` sent as the gradient buckets are: one
// message per bucket.
double bucketedSeconds(double bytes, const GradientBuckets& buckets,
                       double (*collective)(double, int, const Link&), int ranks,
                       const Link& link) {
  double first = std::min(bytes, buckets.firstBytes);
  double rest = bytes - first;
  double full = std::floor(rest / buckets.bytes);
  double last = rest - full * buckets.bytes;
  double seconds = full * collective(buckets.bytes, ranks, link);
  for (double message : {first, last})
    if (message > 0) seconds += collective(message, ranks, link);
  return seconds;
}

// ZeRO-0 to 2's traffic for `params` parameters over `ranks` replicas
// `stride` apart: the gradients' all-reduce, or their reduce-scatter and the
// updated weights' all-gather, sent as the gradient buckets are.
double bucketedTraffic(const TrainingJob& job, const Layout& l, double params, int ranks,
                       int stride) {
  if (ranks == 1 || params == 0) return 0;
  const Link& link = groupLink(job.cluster, stride, ranks);
  auto bucketed = [&](double bytes, double (*collective)(double, int, const Link&)) {
    return bucketedSeconds(bytes, job.buckets, collective, ranks, link);
  };
  double grads = params * job.precision.gradBytes;
  double weights = params * job.precision.weightBytes;
  return l.zeroStage == 0
             ? bucketed(grads, allReduceSeconds)
             : bucketed(grads, reduceScatterSeconds) + bucketed(weights, allGatherSeconds);
}

// Data-parallel traffic left on the critical path (see cost_model.h), over
// the dp x cp ranks that hold the same parameters, and for the experts under
// ep > 1 over the dp x cp / ep that hold the same experts, one after the
// other.
double exposedDataParallel(const TrainingJob& job, const Layout& l, const StagePlan& plan, int rank,
                           int microBatches) {
  int replicas = l.replicas();
  if (replicas == 1) return 0;
  auto [perMicroBatch, backward] = rankMicroBatchSeconds(plan, rank);
  // The step's last gradient bucket leaves only when the slowest replica has
  // finished its backward: a wait no overlap hides.
  double wait = syncWaitSeconds(microBatches * perMicroBatch, replicas, job.cluster.device.noise);
  if (l.zeroStage >= 3) return fullyShardedExposed(job, l, plan, rank, microBatches) + wait;
  auto [common, experts] = replicatedParams(l, plan, rank);
  double traffic = bucketedTraffic(job, l, common, replicas, l.replicaStride()) +
                   bucketedTraffic(job, l, experts, l.expertReplicas(), l.expertReplicaStride());
  return std::max(0.0, traffic - backward) + wait;
}

// What the step adds after the pipeline: the data-parallel traffic the
// slowest-syncing rank leaves exposed, and the optimizer step.
double maxExposedDataParallel(const TrainingJob& job, const Layout& l, const StagePlan& plan,
                              int microBatches) {
  double exposed = 0;
  for (int r = 0; r < l.pp; ++r)
    exposed = std::max(exposed, exposedDataParallel(job, l, plan, r, microBatches));
  return exposed;
}

// The busiest rank's step: ZeRO-1 and up give each replica its share of
// the optimizer, the experts' over their own replicas.
double optimizerSeconds(const TrainingJob& job, const Layout& l, const StagePlan& plan) {
  bool sharded = l.zeroStage >= 1;
  double ownedParams = 0;
  for (int r = 0; r < l.pp; ++r) {
    auto [common, experts] = replicatedParams(l, plan, r);
    ownedParams = std::max(ownedParams, common / (sharded ? l.replicas() : 1) +
                                            experts / (sharded ? l.expertReplicas() : 1));
  }
  return ownedParams * kOptimizerBytesPerParam / job.cluster.device.memoryBandwidth;
}

schedule::CostModel simulatorCosts(const StagePlan& plan) {
  schedule::CostModel costs;
  for (const StageTime& stage : plan.stages) costs.perStage.push_back(stage.costs);
  costs.latency = plan.p2pSeconds;
  costs.overlap = plan.overlap;
  return costs;
}

// The busiest rank's time by cause. What overlapped pairs hide (dualpipe-v)
// comes off the communication it hides, each kind in proportion.
void fillBreakdown(Estimate& e, const StagePlan& plan, const PipelineTiming& timing, int rank) {
  for (int s : stagesOn(plan, rank)) {
    e.time.compute += e.microBatches * plan.stages[s].compute;
    e.time.recompute += e.microBatches * plan.stages[s].recompute;
    e.time.recompute += timing.splitBackwards[s] * plan.stages[s].rewalk;
    e.time.tpComm += e.microBatches * plan.stages[s].tpComm;
    e.time.cpComm += e.microBatches * plan.stages[s].cpComm;
    e.time.epComm += e.microBatches * plan.stages[s].epComm;
    e.time.ppComm += e.microBatches * plan.stages[s].ppComm;
  }
  double traffic = e.time.tpComm + e.time.cpComm + e.time.epComm;
  double kept = traffic > 0 ? 1 - std::min(1.0, timing.hidden[rank] / traffic) : 1;
  e.time.tpComm *= kept;
  e.time.cpComm *= kept;
  e.time.epComm *= kept;
  e.time.bubble = timing.makespan - timing.busy[rank];
}

void fillThroughput(Estimate& e, const TrainingJob& job) {
  const ModelDesc& m = job.model;
  double devices = e.layout.devices();
  e.samplesPerSecond = job.globalBatch / e.iterationSeconds;
  e.tokensPerSecond = e.samplesPerSecond * m.seqLen;
  e.modelFlopsPerDevice = trainingFlops(m, job.globalBatch, false) / e.iterationSeconds / devices;
  e.hardwareFlopsPerDevice =
      trainingFlops(m, job.globalBatch, e.layout.recompute) / e.iterationSeconds / devices;
  e.mfu = e.modelFlopsPerDevice / job.cluster.peakFlops(job.dtype);
  e.daysToTrain = job.tokens > 0 ? job.tokens / e.tokensPerSecond / 86400 : 0;
}

}  // namespace

schedule::Schedule buildSchedule(const Layout& l, int microBatches) {
  schedule::GeneratorOptions options;
  options.ranks = l.pp;
  options.microbatches = microBatches;
  options.virtualStages = l.virtualStages;
  return schedule::generate(l.schedule, options);
}

PipelineTiming timePipeline(const schedule::Schedule& pipeline, const StagePlan& plan) {
  schedule::CostModel costs = simulatorCosts(plan);
  schedule::SimulationResult sim = schedule::simulate(pipeline, costs);
  PipelineTiming timing;
  timing.makespan = sim.makespan;
  timing.messages = sim.messages;
  timing.splitBackwards.assign(pipeline.stages(), 0);
  for (int r = 0; r < pipeline.ranks(); ++r) {
    double alone = 0;  // the rank's actions run one after another
    for (const schedule::Action& action : pipeline.actions(r)) {
      alone += costs.costOf(action);
      if (action.kind == schedule::ActionKind::kBackwardInput)
        ++timing.splitBackwards[action.stage];
    }
    timing.busy.push_back(sim.ranks[r].busy);
    // Without overlap the two sums differ only by rounding.
    timing.hidden.push_back(costs.overlap > 0 ? alone - sim.ranks[r].busy : 0);
    timing.stash.push_back(sim.ranks[r].peakStash);
  }
  return timing;
}

MemoryBreakdown peakRankMemory(const TrainingJob& job, const Layout& layout, const StagePlan& plan,
                               const schedule::Schedule& pipeline, int* peakRank) {
  MemoryBreakdown peak;
  for (int r = 0; r < layout.pp; ++r) {
    MemoryBreakdown mem = rankMemory(job, layout, plan, pipeline, r);
    if (mem.total() > peak.total()) {
      peak = mem;
      if (peakRank) *peakRank = r;
    }
  }
  return peak;
}

double largestModelStateBytes(const TrainingJob& job, const Layout& l, const StagePlan& plan) {
  double largest = 0;
  for (int r = 0; r < l.pp; ++r)
    largest = std::max(largest, rankModelState(job, l, plan, r).total());
  return largest;
}

bool fitsDevice(const TrainingJob& job, double bytes) {
  return bytes <= kUsableMemoryFraction * job.cluster.device.memoryBytes;
}

Estimate estimateFrom(const TrainingJob& job, const Layout& layout, const StagePlan& plan,
                      const PipelineTiming& timing, const schedule::Schedule& pipeline) {
  Estimate e;
  e.layout = layout;
  e.microBatches = layout.microBatches(job.globalBatch);
  e.pipelineMessages = timing.messages;
  int busiest = static_cast<int>(std::max_element(timing.busy.begin(), timing.busy.end()) -
                                 timing.busy.begin());
  fillBreakdown(e, plan, timing, busiest);
  e.time.dpExposed = maxExposedDataParallel(job, layout, plan, e.microBatches);
  for (int r = 0; r < layout.pp; ++r) {
    e.rankMemory.push_back(rankMemory(job, layout, plan, pipeline, r));
    if (e.rankMemory[r].total() > e.memory.total()) {
      e.memory = e.rankMemory[r];
      e.peakStash = timing.stash[r];
    }
  }
  e.rankStash = timing.stash;
  e.time.optimizer = optimizerSeconds(job, layout, plan);
  e.iterationSeconds = timing.makespan + e.time.dpExposed + e.time.optimizer;
  e.fitsMemory = fitsDevice(job, e.memory.total());
  fillThroughput(e, job);
  return e;
}

double iterationLowerBound(const TrainingJob& job, const Layout& layout, const StagePlan& plan,
                           const schedule::Schedule& pipeline) {
  // Each rank runs its actions one after another (an overlapped pair as
  // one), so the makespan is at least every rank's busy time, the sum of
  // their costs.
  schedule::CostModel costs = simulatorCosts(plan);
  double busiest = 0;
  for (int r = 0; r < pipeline.ranks(); ++r) {
    const std::vector<schedule::Action>& actions = pipeline.actions(r);
    double busy = 0;
    for (size_t step = 0; step < actions.size(); ++step) {
      bool paired = pipeline.overlapsNext(r, static_cast<int>(step));
      busy += paired ? costs.costOfOverlapped(actions[step], actions[step + 1])
                     : costs.costOf(actions[step]);
      if (paired) ++step;
    }
    busiest = std::max(busiest, busy);
  }
  int microBatches = layout.microBatches(job.globalBatch);
  return busiest + maxExposedDataParallel(job, layout, plan, microBatches) +
         optimizerSeconds(job, layout, plan);
}

Estimate evaluateLayout(const TrainingJob& job, const Layout& layout) {
  job.model.validate();
  if (std::string why = checkLayout(job, layout); !why.empty()) throw PlanError(why);
  StagePlan plan = planStages(job, layout);
  schedule::Schedule pipeline = buildSchedule(layout, layout.microBatches(job.globalBatch));
  return estimateFrom(job, layout, plan, timePipeline(pipeline, plan), pipeline);
}

}  // namespace strata::plan
