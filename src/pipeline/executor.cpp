#include "strata/pipeline/executor.h"

#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <set>

#include "device_copy.h"
#include "forward_replay.h"
#include "split_backward.h"
#include "stage_links.h"
#include "strata/error.h"
#include "strata/schedule/error.h"
#include "strata/schedule/simulator.h"
#include "strata/schedule/validator.h"

namespace strata::pipeline {
namespace {

using schedule::Action;
using schedule::ActionKind;

double nowSeconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

void validateOrThrow(const schedule::Schedule& schedule) {
  try {
    schedule::validate(schedule);
  } catch (const schedule::ScheduleError& error) {
    throw ConfigError(std::string("pipeline schedule rejected: ") + error.what());
  }
}

// Every rank's actions merged into one order that respects every dependency:
// the simulator's start times under unit costs. A consumer starts no earlier
// than its producer ends, and every cost is positive, so sorting by start
// puts producers first; ties are independent actions.
std::vector<Action> dependencyOrder(const schedule::Schedule& schedule) {
  schedule::SimulationResult timed = schedule::simulate(schedule, schedule::CostModel{});
  std::vector<schedule::TimedAction> actions = timed.actions;
  std::stable_sort(actions.begin(), actions.end(),
                   [](const schedule::TimedAction& a, const schedule::TimedAction& b) {
                     return a.start < b.start || (a.start == b.start && a.rank < b.rank);
                   });
  std::vector<Action> order;
  for (const schedule::TimedAction& timedAction : actions) order.push_back(timedAction.action);
  return order;
}

int64_t bytesOf(const at::Tensor& tensor) { return tensor.numel() * tensor.element_size(); }

// The forward actions of `order`, in its order. No forward waits on a
// backward, so the projection of a valid order is valid, and every rank
// reaches each of its forwards no later than in the full schedule.
std::vector<Action> forwardsOf(const std::vector<Action>& order) {
  std::vector<Action> forwards;
  for (const Action& action : order)
    if (action.kind == ActionKind::kForward) forwards.push_back(action);
  return forwards;
}

bool producesWeightGradients(const Action& action) {
  return action.kind == ActionKind::kBackward || action.kind == ActionKind::kBackwardWeight;
}

// Each stage's last weight-gradient action in `order`, by index.
std::map<size_t, int> lastWeightGradientsOf(const std::vector<Action>& order) {
  std::map<int, size_t> lastOfStage;
  for (size_t i = 0; i < order.size(); ++i)
    if (producesWeightGradients(order[i])) lastOfStage[order[i].stage] = i;
  std::map<size_t, int> stageAt;
  for (const auto& [stage, index] : lastOfStage) stageAt[index] = stage;
  return stageAt;
}

// The first index of `order` after which every weight-gradient action is the
// last of its stage (order.size() when the order has none).
size_t lastWeightGradientsFrom(const std::vector<Action>& order) {
  std::map<int, size_t> lastOfStage;
  for (size_t i = 0; i < order.size(); ++i)
    if (producesWeightGradients(order[i])) lastOfStage[order[i].stage] = i;
  if (lastOfStage.empty()) return order.size();
  size_t from = 0;
  for (size_t i = 0; i < order.size(); ++i) {
    if (producesWeightGradients(order[i]) && lastOfStage[order[i].stage] != i) from = i + 1;
  }
  return from;
}

}  // namespace

// What a (stage, micro-batch) keeps between its forward and its backward.
struct Executor::Stashed {
  at::Tensor input;       // x_m [b, ...]; a leaf requiring grad on stages > 0
  at::Tensor target;      // t_m, last stage only (its recompute needs it)
  at::Tensor output;      // y_m, or loss_m on the last stage; undefined while checkpointed
  at::Tensor outputGrad;  // dL/dy_m, kept from I until W
  int64_t bytes = 0;      // activation bytes this entry holds
  std::optional<ForwardReplay> replay;   // checkpointed: what the recompute must see
  std::unique_ptr<SplitBackward> split;  // from I until W, when I ran on the graph
};

struct Executor::StepState {
  std::vector<at::Tensor> inputs;   // M micro-batches of the input, [B/M, ...] each
  std::vector<at::Tensor> targets;  // M micro-batches of the target
  const LossFn* lossFn = nullptr;
  std::map<std::pair<int, int>, Stashed> stash;  // keyed by (stage, micro-batch)
  double lossSum = 0;
  int64_t stashBytes = 0;
  int64_t peakStashBytes = 0;
  double actionStart = 0;  // moved past every wait, so actions time compute only
  std::vector<TraceEvent> events;
  bool forwardOnly = false;  // evaluate(): nothing is kept for a backward
  const StepHooks* hooks = nullptr;

  void beforeForward(int microbatch) const {
    if (hooks && hooks->beforeForward) hooks->beforeForward(microbatch);
  }

  void hold(Stashed& entry, int64_t bytes) {
    entry.bytes = bytes;
    stashBytes += bytes;
    peakStashBytes = std::max(peakStashBytes, stashBytes);
  }
  void release(const std::pair<int, int>& key) {
    stashBytes -= stash.at(key).bytes;
    stash.erase(key);
  }
};

Executor::Executor(schedule::Schedule schedule, std::vector<Stage>& stages,
                   std::shared_ptr<Communicator> pp, ExecutorOptions options)
    : schedule_(std::move(schedule)), pp_(std::move(pp)), options_(std::move(options)) {
  if (!pp_) throw ConfigError("pipeline executor: the multi-process form needs a pp communicator");
  if (pp_->size() != schedule_.ranks()) {
    throw ConfigError("pipeline schedule has " + std::to_string(schedule_.ranks()) +
                      " ranks but the pp group " + pp_->name() + " has " +
                      std::to_string(pp_->size()));
  }
  rank_ = pp_->rank();
  validateOrThrow(schedule_);
  adoptStages(stages, schedule_.stagesOn(rank_));
  order_ = schedule_.actions(rank_);
  forwardOrder_ = forwardsOf(order_);
  lastWeightGradientsFrom_ = lastWeightGradientsFrom(order_);
  lastWeightGradientsOf_ = lastWeightGradientsOf(order_);
}

Executor::Executor(schedule::Schedule schedule, std::vector<Stage>& stages, ExecutorOptions options)
    : schedule_(std::move(schedule)), options_(std::move(options)) {
  validateOrThrow(schedule_);
  std::vector<int> everyStage(schedule_.stages());
  for (int s = 0; s < schedule_.stages(); ++s) everyStage[s] = s;
  adoptStages(stages, everyStage);
  order_ = dependencyOrder(schedule_);
  forwardOrder_ = forwardsOf(order_);
  lastWeightGradientsFrom_ = lastWeightGradientsFrom(order_);
  lastWeightGradientsOf_ = lastWeightGradientsOf(order_);
}

void Executor::adoptStages(std::vector<Stage>& stages, const std::vector<int>& expected) {
  for (Stage& stage : stages) stages_[stage.index()] = &stage;
  std::vector<int> given;
  for (const auto& entry : stages_) given.push_back(entry.first);
  if (given != expected || given.size() != stages.size()) {
    throw ConfigError("pipeline rank " + std::to_string(rank_) + " was given " +
                      std::to_string(stages.size()) + " stages, not the " +
                      std::to_string(expected.size()) + " the schedule places on it");
  }
  checkpoint_.assign(schedule_.stages(), false);
  for (int stage : options_.checkpointStages) {
    if (stage < 0 || stage >= schedule_.stages()) {
      throw ConfigError("checkpoint stage " + std::to_string(stage) + " is outside [0, " +
                        std::to_string(schedule_.stages()) + ")");
    }
    checkpoint_[stage] = true;
  }
  links_ = std::make_unique<StageLinks>(schedule_, rank_, pp_);
}

Executor::~Executor() = default;

std::vector<int> Executor::stagesByLastWeightGradients() const {
  std::vector<int> stages;
  for (const auto& entry : lastWeightGradientsOf_) stages.push_back(entry.second);
  return stages;
}

Stage& Executor::stage(int index) { return *stages_.at(index); }

void Executor::prepare(const at::Tensor& input, const at::Tensor& target, const LossFn& lossFn,
                       StepState& state) const {
  int m = schedule_.microbatches();
  if (!input.defined() || !target.defined() || input.dim() == 0 || target.dim() == 0) {
    throw ConfigError("pipeline step needs a defined input and target with a batch dimension");
  }
  int64_t batch = input.size(0);
  if (batch < m || batch % m != 0 || target.size(0) != batch) {
    throw ConfigError("pipeline step: batch of " + std::to_string(batch) + " inputs and " +
                      std::to_string(target.size(0)) + " targets does not split into " +
                      std::to_string(m) + " equal micro-batches");
  }
  state.inputs = input.chunk(m, 0);
  state.targets = target.chunk(m, 0);
  state.lossFn = &lossFn;
}

// Hooks are placed by order_'s index: step() passes order_, evaluate() none.
void Executor::run(const std::vector<Action>& order, StepState& state, const StepHooks& hooks) {
  links_->beginStep(order, [this](int s) { return stage(s).device(); });
  for (size_t i = 0; i < order.size(); ++i) {
    if (i == lastWeightGradientsFrom_ && hooks.beforeLastWeightGradients) {
      hooks.beforeLastWeightGradients();
    }
    auto last = lastWeightGradientsOf_.find(i);
    if (last != lastWeightGradientsOf_.end() && hooks.beforeStageLastWeightGradients) {
      hooks.beforeStageLastWeightGradients(last->second);
    }
    runAction(order[i], state);
  }
  if (lastWeightGradientsFrom_ >= order.size() && hooks.beforeLastWeightGradients) {
    hooks.beforeLastWeightGradients();
  }
  links_->flush();
}

double Executor::lossOnEveryRank(double lossSum) {
  if (!pp_ || pp_->size() == 1) return lossSum;
  at::Tensor loss = torch::full({1}, lossSum, torch::kFloat64);
  pp_->broadcast(loss, schedule_.rankOf(schedule_.stages() - 1));
  return loss.item<double>();
}

StepResult Executor::step(const at::Tensor& input, const at::Tensor& target, const LossFn& lossFn,
                          const StepHooks& hooks) {
  StepState state;
  prepare(input, target, lossFn, state);
  state.hooks = &hooks;
  run(order_, state, hooks);
  StepResult result;
  result.loss = lossOnEveryRank(state.lossSum);
  result.peakStashBytes = state.peakStashBytes;
  result.events = std::move(state.events);
  return result;
}

double Executor::evaluate(const at::Tensor& input, const at::Tensor& target, const LossFn& lossFn,
                          const StepHooks& hooks) {
  StepState state;
  prepare(input, target, lossFn, state);
  state.forwardOnly = true;
  state.hooks = &hooks;
  torch::NoGradGuard noGrad;
  run(forwardOrder_, state);
  return lossOnEveryRank(state.lossSum);
}

void Executor::runAction(const Action& action, StepState& state) {
  state.actionStart = nowSeconds();
  switch (action.kind) {
    case ActionKind::kForward:
      forward(action, state);
      break;
    case ActionKind::kBackward:
      backward(action, state);
      break;
    case ActionKind::kBackwardInput:
      backwardInput(action, state);
      break;
    case ActionKind::kBackwardWeight:
      backwardWeight(action, state);
      break;
  }
  if (options_.trace) {
    int row = schedule_.rankOf(action.stage);
    state.events.push_back(TraceEvent{row, action, false, state.actionStart, nowSeconds()});
  }
}

template <typename Receive>
at::Tensor Executor::waitFor(const Action& action, StepState& state, Receive receive) {
  double start = nowSeconds();
  at::Tensor tensor = receive();
  state.actionStart = nowSeconds();
  if (options_.trace) {
    int row = schedule_.rankOf(action.stage);
    state.events.push_back(TraceEvent{row, action, true, start, state.actionStart});
  }
  return tensor;
}

// F: y_m = stage(x_m); the last stage turns it into loss_m = lossFn(y_m, t_m) / M.
void Executor::forward(const Action& action, StepState& state) {
  int s = action.stage;
  Stage& current = stage(s);
  Stashed entry;
  if (s == 0) {
    entry.input = toStageDevice(state.inputs[action.microbatch], current.device());
  } else {
    at::Tensor received = waitFor(action, state, [&] {
      return links_->recvActivation(s - 1, action.microbatch, current.device());
    });
    // A fresh leaf: its .grad is dL/dx_m, the message for the previous stage.
    entry.input = received.detach().requires_grad_(true);
  }
  if (isLast(s)) entry.target = toStageDevice(state.targets[action.microbatch], current.device());

  int64_t activationBytes = 0;
  at::Tensor output;
  state.beforeForward(action.microbatch);
  if (state.forwardOnly) {
    output = current.forward(entry.input);
  } else if (checkpoint_[s]) {
    torch::NoGradGuard noGrad;
    entry.replay.emplace(current);
    output = current.forward(entry.input);
    activationBytes = bytesOf(entry.input);
  } else {
    output = current.forward(entry.input, &activationBytes);
  }
  if (isLast(s)) {
    output = (*state.lossFn)(output, entry.target) / schedule_.microbatches();
    state.lossSum += output.item<double>();
  } else {
    links_->send(output, s, action.microbatch, Flow::kActivation);
  }
  if (state.forwardOnly) return;
  if (!checkpoint_[s]) entry.output = output;
  auto key = std::make_pair(s, action.microbatch);
  state.hold(state.stash[key] = std::move(entry), activationBytes);
}

// Recomputes a checkpointed stage's forward with grad enabled, replaying the
// random state and buffers its first forward saw (forward_replay.h).
void Executor::ensureOutput(const Action& action, Stashed& stashed, const StepState& state) {
  if (stashed.output.defined()) return;
  torch::AutoGradMode withGrad(true);
  state.beforeForward(action.microbatch);
  at::Tensor output =
      stashed.replay->replay([&] { return stage(action.stage).forward(stashed.input); });
  if (isLast(action.stage)) {
    output = (*state.lossFn)(output, stashed.target) / schedule_.microbatches();
  }
  stashed.output = output;
}

// B: dL/dx_m and the weight gradients in one backward pass.
void Executor::backward(const Action& action, StepState& state) {
  auto key = std::make_pair(action.stage, action.microbatch);
  Stashed& entry = state.stash.at(key);
  ensureOutput(action, entry, state);
  at::Tensor grad = receiveOutputGrad(action, entry, state);
  // A first stage of parameter-free layers produces nothing to differentiate.
  if (entry.output.requires_grad()) {
    torch::autograd::backward({entry.output}, {grad});
  }
  if (action.stage > 0) sendInputGrad(action, entry.input.grad(), state);
  state.release(key);
}

// I: only dL/dx_m = (dy_m/dx_m)^T dL/dy_m, sent on at once because the previous
// stage waits for it. The graph and the gradients entering the nodes where
// weight gradients branch off stay for W (split_backward.h), so the stash
// stays until W. The first stage has no input gradient to send: its W runs
// the whole backward. Without weightPassFromKeptGradients, I keeps the whole
// graph and W walks it again from the output.
void Executor::backwardInput(const Action& action, StepState& state) {
  auto key = std::make_pair(action.stage, action.microbatch);
  Stashed& entry = state.stash.at(key);
  ensureOutput(action, entry, state);
  entry.outputGrad = receiveOutputGrad(action, entry, state);
  if (action.stage == 0 || !entry.output.requires_grad()) return;
  if (!options_.weightPassFromKeptGradients) {
    at::Tensor inputGrad = torch::autograd::grad({entry.output}, {entry.input}, {entry.outputGrad},
                                                 /*retain_graph=*/true)[0];
    sendInputGrad(action, inputGrad, state);
    return;
  }
  entry.split =
      std::make_unique<SplitBackward>(entry.output, entry.input, stage(action.stage).parameters());
  // The last stage's output is its loss, seeded with 1.
  at::Tensor seed = entry.outputGrad.defined() ? entry.outputGrad : at::ones_like(entry.output);
  sendInputGrad(action, entry.split->inputGradient(seed), state);
}

// W: dL/dw = (dy_m/dw)^T dL/dy_m, accumulated into every parameter's .grad
// by autograd's own accumulation, which runs the gradient-accumulator hooks
// data parallelism listens to.
void Executor::backwardWeight(const Action& action, StepState& state) {
  auto key = std::make_pair(action.stage, action.microbatch);
  Stashed& entry = state.stash.at(key);
  if (entry.split) {
    entry.split->weightGradients();
  } else {
    std::vector<at::Tensor> parameters = stage(action.stage).parameters();
    if (!parameters.empty() && entry.output.requires_grad()) {
      torch::autograd::backward({entry.output}, {entry.outputGrad}, /*keep_graph=*/false,
                                /*create_graph=*/false, parameters);
    }
  }
  state.release(key);
}

// dL/dy_m from the next stage; undefined on the last stage, whose output is
// the scalar loss (autograd then seeds it with 1).
at::Tensor Executor::receiveOutputGrad(const Action& action, const Stashed& stashed,
                                       StepState& state) {
  if (isLast(action.stage)) return at::Tensor();
  return waitFor(action, state, [&] {
    return links_->recvGradient(action.stage + 1, action.microbatch, stashed.output);
  });
}

void Executor::sendInputGrad(const Action& action, const at::Tensor& grad, StepState& state) {
  // A stage whose input did not influence its output sends zeros, so the
  // previous stage still gets the message it waits for.
  at::Tensor message =
      grad.defined() ? grad
                     : at::zeros_like(state.stash.at({action.stage, action.microbatch}).input);
  links_->send(message, action.stage, action.microbatch, Flow::kGradient);
}

}  // namespace strata::pipeline
