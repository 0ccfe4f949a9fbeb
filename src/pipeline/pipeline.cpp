#include "strata/pipeline/pipeline.h"

#include <torch/torch.h>

#include <algorithm>

#include "strata/error.h"
#include "strata/pipeline/split.h"
#include "strata/plan/errors.h"
#include "strata/schedule/error.h"
#include "strata/schedule/registry.h"
#include "strata/schedule/stash.h"

namespace strata::pipeline {
namespace {

schedule::Schedule makeSchedule(const PipelineOptions& options, int ranks) {
  try {
    return schedule::generate(options.schedule,
                              {ranks, options.microbatches, options.virtualStages});
  } catch (const schedule::ScheduleError& error) {
    throw ConfigError("pipeline schedule '" + options.schedule + "' with " + std::to_string(ranks) +
                      " ranks, " + std::to_string(options.microbatches) + " microbatches, " +
                      std::to_string(options.virtualStages) + " virtual stages: " + error.what());
  }
}

// Measured times differ from rank to rank; the average is the same
// everywhere, so every rank computes the same cut. The group is every rank
// of the layout: averaged over a pp group alone, the tp peers of a stage
// (each in its own pp group) could cut differently.
void averageOverGroup(std::vector<LayerProfile>& profiles, Communicator* group) {
  if (!group || group->size() == 1) return;
  at::Tensor times = torch::empty({static_cast<int64_t>(profiles.size()), 2}, torch::kFloat64);
  for (std::size_t i = 0; i < profiles.size(); ++i) {
    times[i][0] = profiles[i].forwardSeconds;
    times[i][1] = profiles[i].backwardSeconds;
  }
  group->allReduce(times, ReduceOp::kAvg);
  for (std::size_t i = 0; i < profiles.size(); ++i) {
    profiles[i].forwardSeconds = times[i][0].item<double>();
    profiles[i].backwardSeconds = times[i][1].item<double>();
  }
}

plan::Partition profiledPartition(const LayerList& layers, const schedule::Schedule& schedule,
                                  const PipelineOptions& options, Communicator* profileGroup) {
  if (!options.profileInput.defined()) {
    throw ConfigError("autoPartition needs PipelineOptions::profileInput, a sample micro-batch");
  }
  std::vector<LayerProfile> profiles =
      profileLayers(layers, options.profileInput, options.device, options.profile);
  averageOverGroup(profiles, profileGroup);
  std::vector<int> stashPeaks = schedule::peakStash(schedule).perStage;
  int stashed = *std::max_element(stashPeaks.begin(), stashPeaks.end());
  try {
    return plan::partitionBalanced(toLayerCosts(profiles, stashed), schedule.stages(),
                                   options.memoryLimitBytes);
  } catch (const plan::PlanError& error) {
    throw ConfigError(std::string("automatic partitioning failed: ") + error.what());
  }
}

// ConfigError unless `counts` has one count per stage of `schedule`, each
// >= 1, adding up to the layers.
void checkStageCounts(const std::vector<int>& counts, int numLayers,
                      const schedule::Schedule& schedule, const char* what) {
  if (static_cast<int>(counts.size()) != schedule.stages()) {
    throw ConfigError(std::string(what) + " has " + std::to_string(counts.size()) +
                      " counts, but the schedule has " + std::to_string(schedule.stages()) +
                      " stages");
  }
  checkCounts(counts, numLayers);
}

// The cut's counts where they are known without a profile: a cut already
// made, layersPerStage, else as even as possible. Checks them either way, so
// that a bad configuration fails before the profile's all-reduce, alike on
// every rank.
std::vector<int> knownCounts(int numLayers, const schedule::Schedule& schedule,
                             const PipelineOptions& options) {
  if (options.cut) {
    std::vector<int> counts;
    for (const plan::StageReport& stage : options.cut->stages) counts.push_back(stage.numLayers);
    checkStageCounts(counts, numLayers, schedule, "the given cut");
    return counts;
  }
  if (options.layersPerStage.empty()) return evenCounts(numLayers, schedule.stages());
  checkStageCounts(options.layersPerStage, numLayers, schedule, "layersPerStage");
  return options.layersPerStage;
}

bool needsProfile(const PipelineOptions& options) {
  return options.autoPartition && !options.cut && options.layersPerStage.empty();
}

// Decides the cut.
plan::Partition choosePartition(const LayerList& layers, const schedule::Schedule& schedule,
                                const PipelineOptions& options, Communicator* profileGroup) {
  int numLayers = static_cast<int>(layers.size());
  std::vector<int> counts = knownCounts(numLayers, schedule, options);
  if (options.cut) return *options.cut;
  if (needsProfile(options)) return profiledPartition(layers, schedule, options, profileGroup);
  return plan::partitionByCounts(std::vector<plan::LayerCost>(numLayers), counts);
}

std::vector<int> checkpointedStages(const PipelineOptions& options, int stages) {
  if (!options.checkpointActivations) return options.checkpointStages;
  std::vector<int> all(stages);
  for (int s = 0; s < stages; ++s) all[s] = s;
  return all;
}

}  // namespace

std::vector<bool> layersHeldBy(int numLayers, int ranks, int rank, const PipelineOptions& options) {
  schedule::Schedule plan = makeSchedule(options, ranks);
  std::vector<int> counts = knownCounts(numLayers, plan, options);
  if (needsProfile(options)) return {};
  std::vector<bool> held(static_cast<size_t>(numLayers), false);
  int first = 0;
  for (int s = 0; s < plan.stages(); ++s) {
    if (plan.rankOf(s) == rank) std::fill_n(held.begin() + first, counts[s], true);
    first += counts[s];
  }
  return held;
}

plan::Partition cutLayers(const LayerList& layers, int ranks, const PipelineOptions& options,
                          Communicator* profileGroup) {
  return choosePartition(layers, makeSchedule(options, ranks), options, profileGroup);
}

Pipeline::Pipeline(torch::nn::Sequential model, const ParallelGroups& groups,
                   PipelineOptions options)
    : Pipeline(std::move(model), groups.pp->size(), groups.pp, groups.world, {},
               std::move(options)) {}

Pipeline::Pipeline(torch::nn::Sequential model, std::vector<at::Device> devices,
                   PipelineOptions options)
    : Pipeline(std::move(model), static_cast<int>(devices.size()), nullptr, nullptr, devices,
               std::move(options)) {}

Pipeline::Pipeline(torch::nn::Sequential model, int ranks, std::shared_ptr<Communicator> pp,
                   std::shared_ptr<Communicator> profileGroup, std::vector<at::Device> devices,
                   PipelineOptions options)
    : options_(std::move(options)) {
  if (ranks < 1) throw ConfigError("the in-process pipeline needs at least one device");
  LayerList layers = layersOf(model);
  schedule::Schedule plan = makeSchedule(options_, ranks);
  partition_ = choosePartition(layers, plan, options_, profileGroup.get());

  int stages = plan.stages();
  std::vector<at::Device> stageDevices(stages, options_.device);
  std::vector<bool> keep(stages, true);
  for (int s = 0; s < stages; ++s) {
    if (pp) {
      keep[s] = plan.rankOf(s) == pp->rank();
    } else {
      stageDevices[s] = devices[plan.rankOf(s)];
    }
  }
  stages_ = splitByCounts(layers, partition_.counts(), stageDevices, keep);
  for (Stage& stage : stages_) stage.setLayerCall(options_.layerCall);

  ExecutorOptions executorOptions;
  executorOptions.checkpointStages = checkpointedStages(options_, stages);
  executorOptions.trace = options_.trace;
  executorOptions.weightPassFromKeptGradients = options_.weightPassFromKeptGradients;
  executor_ = pp ? std::make_unique<Executor>(plan, stages_, pp, executorOptions)
                 : std::make_unique<Executor>(plan, stages_, executorOptions);
}

Pipeline::~Pipeline() = default;

double Pipeline::step(const at::Tensor& input, const at::Tensor& target, const LossFn& lossFn,
                      const StepHooks& hooks) {
  lastStep_ = executor_->step(input, target, lossFn, hooks);
  return lastStep_.loss;
}

double Pipeline::evaluate(const at::Tensor& input, const at::Tensor& target, const LossFn& lossFn,
                          const StepHooks& hooks) {
  return executor_->evaluate(input, target, lossFn, hooks);
}

std::vector<at::Tensor> Pipeline::parameters() const {
  std::vector<at::Tensor> result;
  for (const Stage& stage : stages_) {
    std::vector<at::Tensor> own = stage.parameters();
    result.insert(result.end(), own.begin(), own.end());
  }
  return result;
}

std::vector<at::Tensor> Pipeline::heldParameters() const {
  std::vector<at::Tensor> result;
  for (const Stage& stage : stages_) {
    std::vector<at::Tensor> own = stage.heldParameters();
    result.insert(result.end(), own.begin(), own.end());
  }
  return result;
}

}  // namespace strata::pipeline
