// Internal: per-stage time and memory of a layout, the inputs of the schedule
// simulator and of the memory model. Formulas are in cost_model.h.
#pragma once

#include <utility>
#include <vector>

#include "strata/plan/cost_model.h"
#include "strata/schedule/simulator.h"

namespace strata::plan {

// One stage's per-micro-batch seconds, split by cause.
struct StageTime {
  double compute = 0;          // forward + backward FLOPs
  double recompute = 0;        // the extra forward of full recompute
  double tpComm = 0;           // tensor-parallel collectives
  double cpComm = 0;           // context-parallel traffic not hidden, and its waits
  double epComm = 0;           // expert-parallel all-to-alls and their waits
  double ppComm = 0;           // hand-offs a blocking sender waits for (Framework)
  double rewalk = 0;           // what W repeats of I when a schedule splits B (see stageTime)
  schedule::StageCosts costs;  // what the simulator sees
};

// A stage's transformer layers by kind.
struct StageLayers {
  int dense = 0;
  int moe = 0;
};

struct StagePlan {
  std::vector<StageTime> stages;         // pipelineStages(layout) of them (layout.h)
  std::vector<int> stageRank;            // the rank of each (stageRanks, layout.h)
  std::vector<StageLayers> stageLayers;  // of each stage
  // Parameters per rank (already / tp; cp ranks hold them all), its experts'
  // (E/ep of each MoE layer) among them.
  std::vector<double> rankParams;
  std::vector<double> rankExpertParams;
  // Under LoRA (ModelDesc::lora) the base is frozen: only the adapters among
  // rankParams train, and the experts with the rest of the base.
  bool frozenBase = false;
  std::vector<double> rankAdapterParams;
  double p2pSeconds = 0;  // one activation hand-off between ranks
  // The share of an overlapped pair's shorter action the simulator hides
  // (schedule::CostModel::overlap): only dualpipe-v issues pairs.
  double overlap = 0;
};

StagePlan planStages(const TrainingJob& job, const Layout& layout);
// The stages `rank` runs, in increasing order: one, v round-robin, or the
// V's two.
std::vector<int> stagesOn(const StagePlan& plan, int rank);
// Time one micro-batch spends on a rank's stages: {forward + backward, backward}.
std::pair<double, double> rankMicroBatchSeconds(const StagePlan& plan, int rank);
// The transformer layers of a rank's stages.
int rankLayers(const StagePlan& plan, int rank);
// A rank's trained parameters by the group that averages their gradients
// (and shards them under ZeRO): {the dp x cp replicas', the experts' own
// replicas'}. At ep = 1 the trainer keeps the experts with the rest; under
// LoRA only the adapters train, all with the dp x cp replicas.
std::pair<double, double> replicatedParams(const Layout& l, const StagePlan& plan, int rank);
// A rank's parameters, a frozen base's included, by the group that shards
// them under ZeRO-3: {the dp x cp replicas', the experts' own replicas'}.
std::pair<double, double> shardedParams(const Layout& l, const StagePlan& plan, int rank);

// What the schedule simulator says about a layout's pipeline. The ZeRO stage
// does not change it, so the search shares one timing between ZeRO variants.
struct PipelineTiming {
  double makespan = 0;
  std::vector<double> busy;    // per rank
  std::vector<double> hidden;  // per rank: what overlapped pairs saved of its actions' sum
  std::vector<int> stash;      // peak stage-micro-batches per rank
  // Per stage, the micro-batches whose backward the schedule splits into I
  // and W (all of them under zb-h1 and zb-v, DualPipeV's last few).
  std::vector<int> splitBackwards;
  int messages = 0;  // hand-offs between ranks a step
};

schedule::Schedule buildSchedule(const Layout& layout, int microBatches);
PipelineTiming timePipeline(const schedule::Schedule& pipeline, const StagePlan& plan);
Estimate estimateFrom(const TrainingJob& job, const Layout& layout, const StagePlan& plan,
                      const PipelineTiming& timing, const schedule::Schedule& pipeline);
// The memory of the rank that needs the most over a step of `pipeline`
// (rank_memory.h), and which rank that is.
MemoryBreakdown peakRankMemory(const TrainingJob& job, const Layout& layout, const StagePlan& plan,
                               const schedule::Schedule& pipeline, int* peakRank = nullptr);
// At most estimateFrom's iterationSeconds, without simulating the pipeline:
// the busiest rank's compute, the exposed data-parallel traffic and the
// optimizer step (no bubble). The search skips the simulation of a layout
// this bound already ranks out of its top.
double iterationLowerBound(const TrainingJob& job, const Layout& layout, const StagePlan& plan,
                           const schedule::Schedule& pipeline);
// The largest model state (parameters, gradients, optimizer) of any rank: a
// lower bound of its memory that needs no schedule.
double largestModelStateBytes(const TrainingJob& job, const Layout& layout, const StagePlan& plan);
bool fitsDevice(const TrainingJob& job, double bytes);

}  // namespace strata::plan
