// The executor: runs ANY validated schedule (schedule/) for the stages one
// process owns, with autograd and point-to-point messages.
//
//   F  stage s, micro-batch m: take the input (stage 0 slices the batch, the
//      others receive the previous stage's output), run the stage, stash what
//      backward needs, post the output to stage s+1 (or, on the last stage,
//      compute loss_m = lossFn(y_m, t_m) / M).
//   B  receive dL/dy_m from stage s+1, backpropagate through the stage
//      (weight gradients accumulate in .grad), post dL/dx_m to stage s-1.
//   I  the input-gradient half of B: dL/dx_m only, sent on at once.
//   W  the weight-gradient half of B, run later to fill pipeline bubbles.
//
// Since sum_m mean(l(y_m, t_m)) / M = mean over the whole batch (equal
// micro-batches), the accumulated gradients equal full-batch training; the
// caller steps its optimizer after step() returns (the flush).
//
// Blocking: step() blocks on receives from peers and on the final waits for
// its posted sends, every one bounded by the communicator's timeout
// (TimeoutError/PeerError naming op and peer). The construction throws
// ConfigError for a schedule that fails validation or does not fit the
// stages given; step() throws ConfigError, before any communication, when the
// batch (which every rank passes, with the same shape) does not split into
// `microbatches` equal micro-batches.
#pragma once

#include <ATen/core/Tensor.h>

#include <functional>
#include <map>
#include <memory>
#include <vector>

#include "strata/pipeline/stage.h"
#include "strata/pipeline/trace.h"
#include "strata/runtime/communicator.h"
#include "strata/schedule/schedule.h"

namespace strata::pipeline {

// loss = lossFn(output, target), reduced by mean over the micro-batch.
using LossFn = std::function<at::Tensor(const at::Tensor& output, const at::Tensor& target)>;

struct ExecutorOptions {
  // Stage indices whose forward runs under no-grad, keeping only the stage
  // input; backward recomputes the forward with grad first (activation
  // checkpointing: memory of one input instead of every layer's output, for
  // one extra forward). The recompute sees the random generator state and
  // module buffers the first forward saw, so dropout draws the same masks
  // and counters or statistics are not advanced twice (forward_replay.h).
  std::vector<int> checkpointStages;
  bool trace = false;  // record a TraceEvent per action and per wait
  // Zero-bubble schedules: W runs only the weight-gradient products, from
  // the gradients I kept (split_backward.h). False makes W walk the stage's
  // backward again from its output, as a plain backward restricted to the
  // weights; needed when parameters are gathered by hooks on the layers'
  // outputs, which only that walk passes (ZeRO-3's fully sharded units).
  bool weightPassFromKeptGradients = true;
};

// What a caller can act on during step().
struct StepHooks {
  // Runs once per step, before the first action after which every action of
  // this rank that produces weight gradients (B, or W under zero-bubble
  // schedules) is the last one of its stage: from there on each parameter
  // receives exactly one more gradient. Data parallelism turns its gradient
  // sync on here (DataParallel::setRequireSync), so its buckets reduce during
  // the last micro-batch's backward instead of after the step. Under
  // interleaved schedules a rank's chunks finish at different times and the
  // hook comes before the last chunk's final gradients only.
  std::function<void()> beforeLastWeightGradients;
  // Runs once per step for each stage of this rank, before the action that
  // gives the stage's parameters their last gradients, in the order of
  // stagesByLastWeightGradients(). With one replica set per model chunk,
  // data parallelism reduces each chunk's buckets as that chunk finishes.
  std::function<void(int stage)> beforeStageLastWeightGradients;
  // Runs before every forward this rank runs, with its micro-batch's index
  // (0 .. M - 1), including the recompute of a checkpointed stage before
  // its backward: a model reading per-micro-batch state besides its input
  // (packed documents, packed_documents.h) selects it here.
  std::function<void(int microbatch)> beforeForward;
};

struct StepResult {
  // Mean loss over the batch. Known on every rank: the last stage's rank
  // broadcasts it over the pp group (one scalar per step).
  double loss = 0;
  // Peak bytes of activations held in this rank's stash during the step.
  int64_t peakStashBytes = 0;
  std::vector<TraceEvent> events;  // when tracing
};

class StageLinks;

class Executor {
 public:
  // Multi-process: this process is rank pp.rank() of the schedule and owns
  // `stages` (those of schedule.stagesOn(pp.rank()), any order).
  Executor(schedule::Schedule schedule, std::vector<Stage>& stages,
           std::shared_ptr<Communicator> pp, ExecutorOptions options = {});
  // In-process: one process owns every stage (each on its own device) and runs
  // all ranks' actions in one order that respects every dependency.
  Executor(schedule::Schedule schedule, std::vector<Stage>& stages, ExecutorOptions options = {});
  ~Executor();

  StepResult step(const at::Tensor& input, const at::Tensor& target, const LossFn& lossFn,
                  const StepHooks& hooks = {});
  // Forward only (evaluation): the schedule's F actions in its order, under
  // no-grad, keeping nothing for a backward; no gradient changes. Returns the
  // mean loss over the batch, on every rank. Blocks and throws as step();
  // of `hooks` only beforeForward runs.
  double evaluate(const at::Tensor& input, const at::Tensor& target, const LossFn& lossFn,
                  const StepHooks& hooks = {});

  const schedule::Schedule& schedule() const { return schedule_; }
  // This rank's stages in the order their last weight gradients come in a
  // step (every stage in-process). A parameter two stages share receives its
  // last gradient with the later one.
  std::vector<int> stagesByLastWeightGradients() const;

 private:
  struct Stashed;
  struct StepState;

  void adoptStages(std::vector<Stage>& stages, const std::vector<int>& expected);
  // Checks the batch (ConfigError) and cuts it into micro-batches.
  void prepare(const at::Tensor& input, const at::Tensor& target, const LossFn& lossFn,
               StepState& state) const;
  void run(const std::vector<schedule::Action>& order, StepState& state,
           const StepHooks& hooks = {});
  // The last stage's rank broadcasts the loss over pp.
  double lossOnEveryRank(double lossSum);
  void runAction(const schedule::Action& action, StepState& state);
  // Runs `receive`, recording the time as a wait for a peer.
  template <typename Receive>
  at::Tensor waitFor(const schedule::Action& action, StepState& state, Receive receive);
  void forward(const schedule::Action& action, StepState& state);
  void backward(const schedule::Action& action, StepState& state);
  void backwardInput(const schedule::Action& action, StepState& state);
  void backwardWeight(const schedule::Action& action, StepState& state);
  at::Tensor receiveOutputGrad(const schedule::Action& action, const Stashed& stashed,
                               StepState& state);
  void ensureOutput(const schedule::Action& action, Stashed& stashed, const StepState& state);
  void sendInputGrad(const schedule::Action& action, const at::Tensor& grad, StepState& state);
  Stage& stage(int index);
  bool isLast(int stage) const { return stage == schedule_.stages() - 1; }

  schedule::Schedule schedule_;
  std::map<int, Stage*> stages_;
  std::vector<schedule::Action> order_;
  std::vector<schedule::Action> forwardOrder_;   // order_'s F actions: evaluate()
  size_t lastWeightGradientsFrom_ = 0;           // index in order_: StepHooks
  std::map<size_t, int> lastWeightGradientsOf_;  // index in order_ -> its stage's last
  std::vector<bool> checkpoint_;
  std::unique_ptr<StageLinks> links_;
  std::shared_ptr<Communicator> pp_;
  ExecutorOptions options_;
  int rank_ = 0;  // this process's pp rank; unused in-process, where every stage is local
};

}  // namespace strata::pipeline
