// Pipeline: a torch::nn::Sequential turned into a pipelined trainer.
//
//   auto world = strata::World::init();
//   auto groups = world->parallelGroups(strata::ParallelLayout(world->size(), {/*pp=*/4}));
//   strata::pipeline::PipelineOptions opts;
//   opts.schedule = "1f1b";
//   opts.microbatches = 8;
//   strata::pipeline::Pipeline pipe(model, groups, opts);
//   torch::optim::SGD optimizer(pipe.parameters(), 0.1);
//   for (...) {
//     optimizer.zero_grad();
//     double loss = pipe.step(input, target, lossFn);  // the whole batch, on every rank
//     optimizer.step();                                  // after the flush
//   }
//
// Every rank builds the same model (same seed) and keeps only its stages;
// parameters() are the ones this rank trains. The in-process form takes one
// device per pipeline rank instead of groups and runs every stage in this
// process, moving activations and gradients between devices itself.
//
// Cutting: a cut already made (cutLayers') or layersPerStage when given, else
// a profiled cost-balanced cut when autoPartition, else layer counts as even
// as possible. Stages = pipeline
// ranks x virtualStages, or 2 x ranks placed in a V for zb-v and dualpipe-v. Construction throws
// ConfigError, on every rank alike and before any communication, for an unknown schedule, a
// schedule/size combination it rejects, fewer layers than stages, bad counts, or autoPartition
// without profileInput; with autoPartition it blocks on one all-reduce of the measured times over
// every rank of the groups' world, so that tp and dp peers, whose pp groups differ, cut alike.
// step() blocks and throws as Executor::step (executor.h). Apart from that all-reduce only the pp
// dimension of the groups is used: dp and tp are the business of their own components.
#pragma once

#include <torch/nn/modules/container/sequential.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "strata/pipeline/executor.h"
#include "strata/pipeline/profiler.h"
#include "strata/pipeline/stage.h"
#include "strata/plan/partition.h"
#include "strata/runtime/world.h"

namespace strata::pipeline {

struct PipelineOptions {
  std::string schedule = "1f1b";  // any name of schedule::generatorNames()
  int microbatches = 1;
  int virtualStages = 1;  // model chunks per rank (interleaved schedules)

  std::vector<int> layersPerStage;     // explicit cut, one count per stage
  std::optional<plan::Partition> cut;  // a cut already made (cutLayers'), kept with its costs
  bool autoPartition = false;          // profile the layers and balance the cut
  at::Tensor profileInput;             // one sample micro-batch for the profile
  ProfileOptions profile;
  double memoryLimitBytes = plan::kNoMemoryLimit;  // per stage, for autoPartition

  bool checkpointActivations = false;       // recompute every stage's forward in backward
  std::vector<int> checkpointStages;        // or only these stages
  bool trace = false;                       // keep TraceEvents of every step (lastStep())
  bool weightPassFromKeptGradients = true;  // ExecutorOptions (executor.h)

  at::Device device = at::kCPU;  // multi-process: the device of this rank's stages
  LayerCall layerCall;           // runs around every layer's forward (stage.h)
};

// Which of a model's `numLayers` top-level layers pipeline rank `rank` of
// `ranks` will run under `options`, decided as the constructor decides the
// cut but before any model exists, so that a builder makes only those
// (models::ModelFamily::build's `held`). Empty under autoPartition without
// a cut or layersPerStage: that cut needs the layers timed. Throws
// ConfigError as the constructor would; never communicates.
std::vector<bool> layersHeldBy(int numLayers, int ranks, int rank, const PipelineOptions& options);

// The cut the constructor would make of `layers` over `ranks` pipeline
// ranks (options.cut, layersPerStage, a profiled one under autoPartition, or
// even), for a caller that must know it before it builds the model: it can
// time stand-ins for the layers (layers of the same structure, so the same
// cost) and hand the cut over as options.cut. Under autoPartition it blocks
// on one all-reduce of the times over `profileGroup` (nullptr: none), and
// throws as the constructor does.
plan::Partition cutLayers(const LayerList& layers, int ranks, const PipelineOptions& options,
                          Communicator* profileGroup);

class Pipeline {
 public:
  // Multi-process: one pipeline rank per member of groups.pp.
  Pipeline(torch::nn::Sequential model, const ParallelGroups& groups, PipelineOptions options = {});
  // In-process: devices[r] holds the stages of pipeline rank r.
  Pipeline(torch::nn::Sequential model, std::vector<at::Device> devices,
           PipelineOptions options = {});
  ~Pipeline();

  // One training step over the whole batch: forward and backward of every
  // micro-batch per the schedule, gradients accumulated in .grad. Returns the
  // batch's mean loss, on every rank.
  double step(const at::Tensor& input, const at::Tensor& target, const LossFn& lossFn,
              const StepHooks& hooks = {});
  // Forward only, for evaluation: the mean loss over the batch on every rank,
  // no gradients touched (Executor::evaluate).
  double evaluate(const at::Tensor& input, const at::Tensor& target, const LossFn& lossFn,
                  const StepHooks& hooks = {});

  std::vector<at::Tensor> parameters() const;      // of this process's stages, those that train
  std::vector<at::Tensor> heldParameters() const;  // and the frozen ones too
  const std::vector<Stage>& stages() const { return stages_; }
  const schedule::Schedule& schedule() const { return executor_->schedule(); }
  // Executor::stagesByLastWeightGradients().
  std::vector<int> stagesByLastWeightGradients() const {
    return executor_->stagesByLastWeightGradients();
  }
  // Every stage's layers, with predicted time and memory when profiled.
  const plan::Partition& partition() const { return partition_; }
  std::string partitionTable() const { return formatPartition(partition_); }
  const StepResult& lastStep() const { return lastStep_; }

 private:
  // profileGroup: the ranks over which autoPartition's measurements are averaged.
  Pipeline(torch::nn::Sequential model, int ranks, std::shared_ptr<Communicator> pp,
           std::shared_ptr<Communicator> profileGroup, std::vector<at::Device> devices,
           PipelineOptions options);

  PipelineOptions options_;
  plan::Partition partition_;
  std::vector<Stage> stages_;
  std::unique_ptr<Executor> executor_;
  StepResult lastStep_;
};

}  // namespace strata::pipeline
