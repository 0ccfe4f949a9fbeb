#include "strata/train/trainer.h"

#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <set>
#include <thread>

#include "config/config_agreement.h"
#include "pipeline/held_layers.h"
#include "strata/config/elastic_layout.h"
#include "strata/config/validate_config.h"
#include "strata/error.h"
#include "strata/models/model_family.h"
#include "strata/pipeline/pipeline.h"
#include "strata/pipeline/split.h"
#include "strata/pipeline/trace.h"
#include "strata/runtime/threads.h"
#include "strata/tensor_parallel/dropout.h"
#include "strata/tensor_parallel/sharding.h"
#include "strata/train/data_source.h"
#include "strata/train/device.h"
#include "strata/train/grad_norm.h"
#include "strata/train/precision.h"
#include "strata/util/log.h"
#include "strata/util/toml.h"
#include "train/frozen_base.h"
#include "train/fully_sharded_training.h"
#include "train/moe_training.h"
#include "train/packed_batch.h"
#include "train/trainer_state.h"

namespace strata::train {

namespace {

// STRATA_DEBUG_SLOW_RANK's rehearsal of a straggler (process_env.h): the
// layers' forwards of this rank wait before they run, through `inner` when
// the layout already wraps them.
pipeline::LayerCall slowedDown(pipeline::LayerCall inner, const ProcessEnv& env) {
  auto delay = std::chrono::duration<double>(env.debugSlowSeconds);
  return [inner, delay](int layer, const at::Tensor& input, const pipeline::LayerBody& run) {
    std::this_thread::sleep_for(delay);
    return inner ? inner(layer, input, run) : run(input);
  };
}

// The pipeline ranks of the embedding's stage and of the head's.
int firstStageRank(const Trainer::State& s) { return s.pipeline->schedule().rankOf(0); }
int lastStageRank(const Trainer::State& s) {
  const schedule::Schedule& plan = s.pipeline->schedule();
  return plan.rankOf(plan.stages() - 1);
}

void setRequireSync(Trainer::State& s, bool on) {
  for (auto& replicas : s.replicaSets) replicas->setRequireSync(on);
  if (s.fullySharded) s.fullySharded->setRequireSync(on);
}

// Turns sync on for the sets `stage`'s last weight gradients complete
// (kEveryStage: those of no single stage, and ZeRO-3's units).
void startSyncOf(Trainer::State& s, int stage) {
  for (size_t i = 0; i < s.replicaSets.size(); ++i)
    if (s.replicaSetStages[i] == stage) s.replicaSets[i]->setRequireSync(true);
  if (s.fullySharded && stage == Trainer::State::kEveryStage) s.fullySharded->setRequireSync(true);
}

// Turns gradient sync off on every replica set for its lifetime.
class AccumulateOnly {
 public:
  explicit AccumulateOnly(Trainer::State& s) : s_(s) { setRequireSync(s_, false); }
  ~AccumulateOnly() { setRequireSync(s_, true); }

 private:
  Trainer::State& s_;
};

// Puts a module in evaluation mode (dropout off) for its lifetime, and back
// into training mode after, also when evaluation throws.
class EvalMode {
 public:
  explicit EvalMode(torch::nn::Sequential model) : model_(std::move(model)) { model_->eval(); }
  ~EvalMode() { model_->train(); }
  EvalMode(const EvalMode&) = delete;
  EvalMode& operator=(const EvalMode&) = delete;

 private:
  torch::nn::Sequential model_;
};

// Runs in the first member initializer, so the whole config is checked (and
// every problem reported) before a member that rejects bad values on its own,
// the LR schedule, sees it.
// A world of another size than configured is fitted first, when the elastic
// policy allows (elastic_layout.h), and every rank says what changed.
TrainConfig validated(TrainConfig config, int worldSize) {
  FittedLayout fitted = fitLayoutToWorld(config, worldSize);
  if (!fitted.note.empty()) logMessage(LogLevel::Info, fitted.note);
  validateConfig(fitted.config, worldSize);
  return fitted.config;
}

// A sample micro-batch of token ids [micro_batch, seq_len] and its targets
// (which ids does not change the time), and the loss on the last layer's
// output: the head's product lives in the loss (modelOutputLoss), so it is
// weighed with the layer that feeds it. More runs than the profiler's
// default: with 2 warm-up and 5 timed runs the demo's model (4 workers on 2
// cores) was cut [3, 3], [5, 1], [4, 2] and [5, 1] in four starts, its first
// stage timed at 55 to 65 ms; with 3 and 11, [5, 1] in four of four, the
// first stage at 34 to 38 ms against 60 to 63 for the head.
void setBalancedPartition(pipeline::PipelineOptions& options, const Trainer::State& s,
                          const TrainConfig& config, const pipeline::LossFn& lossFn) {
  int64_t count = config.train.microBatch * config.train.seqLen;
  at::Tensor ids = torch::arange(count + 1, torch::kLong).remainder(config.model.vocab);
  at::Tensor input = s.localTokens(ids.narrow(0, 0, count).view({config.train.microBatch, -1}));
  at::Tensor target =
      s.localTokens(ids.narrow(0, 1, count).view({config.train.microBatch, -1})).to(s.device);
  options.autoPartition = true;
  options.profileInput = input;
  options.profile.warmup = 3;
  options.profile.repetitions = 11;
  options.profile.lastLayerLoss = [lossFn, target](const at::Tensor& output) {
    return lossFn(output, target);
  };
}

// `countedTargets`: see State::countedTargets; null for the mean.
pipeline::LossFn modelLoss(torch::nn::Sequential model,
                           std::shared_ptr<const double> countedTargets = nullptr) {
  return [model = std::move(model), countedTargets](const at::Tensor& output,
                                                    const at::Tensor& target) {
    return models::modelOutputLoss(model, output, target, countedTargets ? *countedTargets : 0);
  };
}

// With a loss mask (or packed documents, whose boundaries leave targets
// out) the loss is the mean over the counted targets of the
// whole global batch, N of them: each micro-batch's sum over its counted
// targets divided by N / (M x R), which the pipeline's mean over the M
// micro-batches and the R replicas' (dp x cp) average of the gradients and
// the loss turn into the sum over all divided by N. Blocks in an all-reduce
// over the replicas. A batch without one counted target trains on nothing
// (its loss is 0).
void countTargets(Trainer::State& s, const at::Tensor& target, int64_t microBatches) {
  if (!s.lossMasked && !s.documents) return;
  at::Tensor counted = s.localTokens(target).ge(0).sum().to(torch::kDouble).reshape({1});
  s.replicas->allReduce(counted);
  *s.countedTargets = std::max(counted.item<double>(), 1.0) /
                      static_cast<double>(microBatches * s.replicas->size());
}

// A measured cut times stand-ins, so that no rank builds the whole model to
// measure it: the embedding, the head and the first block of each kind
// (dense, mixture-of-experts), every other block timed as the one of its
// kind, whose structure, and so cost, it shares. In the step's precision,
// without dropout, so that it draws nothing from the random generators and
// the run trains as it would with the same cut given explicitly. Blocks on
// the profile's all-reduce over every rank.
plan::Partition measureCut(pipeline::PipelineOptions options, const Trainer::State& s,
                           const TrainConfig& config) {
  std::vector<int64_t> timedAs = models::blockStandIns(s.spec);
  std::vector<bool> built(timedAs.size() + 2, false);
  built.front() = built.back() = true;
  for (int64_t first : timedAs) built[first + 1] = true;
  torch::nn::Sequential model =
      models::modelFamily(s.spec.architecture)
          .build(s.spec, s.groups.tp, s.contextParallel, s.experts, built);
  pipeline::LayerList all = pipeline::layersOf(model), layers{all.front()};
  for (int64_t first : timedAs) layers.push_back(all[first + 1]);
  layers.push_back(all.back());
  setBalancedPartition(options, s, config, modelLoss(model));
  if (s.groups.world->rank() == 0) {
    auto kinds = std::count(built.begin(), built.end(), true) - 2;
    logMessage(
        LogLevel::Info,
        "balanced pipeline cut: timing the embedding, the head and " + std::to_string(kinds) +
            " block(s) standing for all " + std::to_string(timedAs.size()) + ", " +
            std::to_string(options.profile.warmup + options.profile.repetitions) + " runs each");
  }
  PrecisionGuard precision(config.train.precision, s.device.type());
  EvalMode noDropout(model);
  return pipeline::cutLayers(layers, s.groups.pp->size(), options, s.groups.world.get());
}

// The cut the pipeline made becomes parallel.stage_layers of this run's
// config, which checkpoints save: a resumed run, generation and conversion
// find every layer on the rank that trained it (layerOwners), also when the
// cut was measured. A measured cut is printed once.
void recordCut(TrainConfig& config, const Trainer::State& s, int rank) {
  std::vector<int64_t> counts;
  for (const plan::StageReport& stage : s.pipeline->partition().stages)
    counts.push_back(stage.numLayers);
  bool measured = config.parallel.stageLayers.empty() && config.parallel.partition == "balanced";
  config.parallel.stageLayers = counts;
  if (!measured || rank != 0) return;
  std::string table = s.pipeline->partitionTable();
  table.pop_back();  // its last newline; the log adds one
  logMessage(
      LogLevel::Info,
      "balanced pipeline cut: stage_layers = " +
          util::tomlLiteral(util::TomlArray(counts.begin(), counts.end())) +
          ", by the layers' times averaged over every rank (one block timed for each kind)\n" +
          table);
}

}  // namespace

Trainer::Trainer(TrainConfig config, std::shared_ptr<World> world)
    : config_(validated(std::move(config), world->size())),
      world_(std::move(world)),
      lr_(LrScheduleOptions{config_.train.lr, config_.train.minLr, config_.train.warmupSteps,
                            config_.train.steps}) {
  // Everything that can be wrong with the config or the data is found first
  // (the config itself in validated()), on every rank alike, before the first
  // collective.
  at::Device device = trainingDevice(config_.train.device, world_->env().localRank);
  checkPrecisionSupported(config_.train.precision, device.type());
  checkSameConfigOnEveryRank(config_, world_->comm());
  DataSplit data = makeDataSplit(config_);
  setIntraOpThreads(static_cast<int>(config_.train.threads));
  torch::manual_seed(static_cast<uint64_t>(config_.train.seed));

  const ParallelConfig& p = config_.parallel;
  ParallelLayout layout(world_->size(), {static_cast<int>(p.pp), static_cast<int>(p.dp),
                                         static_cast<int>(p.cp), static_cast<int>(p.tp)});
  checkTensorParallelInsideNodes(layout, world_->env().nodeSizes);
  state_ = std::make_unique<State>(layout, world_->parallelGroups(layout), device);
  joinReplicas();
  joinExperts();
  buildModel();
  std::vector<data_parallel::NamedTensor> named = collectOwnParameters();
  linkTiedWeight();
  buildOptimizer(named);
  openData(data);
}

// Under context parallelism the ranks of one dp x cp plane (same pp stage
// and tp slice) hold the same parameters and average their gradients
// together; its group is ordered by (dp, cp), as the layout orders ranks.
void Trainer::joinReplicas() {
  State& s = *state_;
  int cp = s.layout.degree(Dim::kContext);
  if (cp == 1) {
    s.replicas = s.groups.dp;
    return;
  }
  std::vector<int> ranks;
  for (int dp : s.layout.groupRanks(Dim::kData, world_->rank())) {
    for (int member : s.layout.groupRanks(Dim::kContext, dp)) ranks.push_back(member);
  }
  const Coord& c = s.groups.coord;
  s.replicas = world_->newGroup(
      "dpcp[pp=" + std::to_string(c.pp) + ",tp=" + std::to_string(c.tp) + "]", ranks);
  auto algorithm = context_parallel::parseCpAlgorithm(config_.parallel.cpAlgorithm);
  s.contextParallel = std::make_shared<context_parallel::ContextParallel>(
      context_parallel::ContextParallel{s.groups.cp, algorithm});
}

// Mixture-of-experts models: the ep group and the expert replicas
// (moe_training.h), and what the MoE layers share with this trainer. Each
// micro-batch's loss weighs 1 / micro-batches in backward, and so do the
// routing losses.
void Trainer::joinExperts() {
  State& s = *state_;
  if (!config_.model.moe.enabled()) return;
  ExpertGroups groups =
      joinExpertGroups(*world_, s.replicas, static_cast<int>(config_.parallel.ep), s.groups.coord);
  s.expertGroup = groups.ep;
  s.expertReplicas = groups.expertReplicas;
  s.experts = std::make_shared<expert_parallel::ExpertParallel>(
      groups.ep, s.contextParallel ? s.contextParallel->comm : nullptr);
  s.experts->setLossScale(1.0 / static_cast<double>(config_.microBatches()));
}

void Trainer::buildModel() {
  State& s = *state_;
  const ParallelConfig& p = config_.parallel;
  s.spec = trainingModelSpecOf(config_);
  if (config_.data.pack)
    s.spec.documents = s.documents = std::make_shared<context_parallel::PackedDocuments>();
  pipeline::PipelineOptions options;
  options.schedule = p.schedule;
  options.microbatches = static_cast<int>(config_.microBatches());
  options.virtualStages = static_cast<int>(p.virtualStages);
  options.layersPerStage.assign(p.stageLayers.begin(), p.stageLayers.end());
  if (p.stageLayers.empty() && p.partition == "balanced")
    options.cut = measureCut(options, s, config_);
  // Only this rank's blocks are kept from the start (a stage's, or a V's two).
  std::vector<bool> held;
  if (s.groups.pp->size() > 1) {
    held = pipeline::layersHeldBy(static_cast<int>(s.spec.layers) + 2, s.groups.pp->size(),
                                  s.groups.coord.pp, options);
  }
  // Under ZeRO-3 the layers come as shells, each given its values only as it
  // is sharded (buildOptimizer), so no rank holds the whole model.
  models::HeldAs heldAs = p.zero == 3 ? models::HeldAs::kShells : models::HeldAs::kWhole;
  s.model = models::modelFamily(s.spec.architecture)
                .build(s.spec, s.groups.tp, s.contextParallel, s.experts, held, heldAs);
  freezeBase(*s.model, config_.finetune);
  options.checkpointActivations = p.checkpointActivations;
  options.trace = true;
  options.device = s.device;
  if (p.zero == 3) {
    // Its units are gathered for backward by hooks on the layers' outputs.
    options.weightPassFromKeptGradients = false;
    // Set before the first forward: buildOptimizer() creates the units.
    options.layerCall = [state = &s](int layer, const at::Tensor& input,
                                     const pipeline::LayerBody& run) {
      return state->fullySharded ? state->fullySharded->forwardLayer(layer, input, run)
                                 : run(input);
    };
  }
  const ProcessEnv& env = world_->env();
  if (env.debugSlowRank == env.rank) options.layerCall = slowedDown(options.layerCall, env);
  s.lossFn = modelLoss(s.model, s.countedTargets);
  s.pipeline = std::make_unique<pipeline::Pipeline>(s.model, s.groups, options);
  s.heldLayers = pipeline::releaseOtherLayers(s.model, s.pipeline->heldParameters());
  recordCut(config_, s, world_->rank());
}

// This rank's parameters, each once (a tied weight is registered twice), with
// their tensor-parallel split and whether this rank counts them in the global
// gradient norm (a tp-replicated weight counts on tp rank 0 only, a tied
// weight on its first stage only). Frozen ones (a LoRA run's base) are
// saved and loaded with the rest but take no gradients and no optimizer
// state: they are in `shards` only.
std::vector<data_parallel::NamedTensor> Trainer::collectOwnParameters() {
  State& s = *state_;
  std::set<c10::TensorImpl*> owned, seen;
  for (const at::Tensor& t : s.pipeline->heldParameters()) owned.insert(t.unsafeGetTensorImpl());
  std::vector<data_parallel::NamedTensor> named;
  for (const auto& item : s.model->named_parameters()) {
    const at::Tensor& t = item.value();
    if (!contains(owned, t) || contains(seen, t)) continue;
    seen.insert(t.unsafeGetTensorImpl());
    int64_t shardDim = tensor_parallel::shardDimOf(*s.model, item.key());
    if (!t.requires_grad()) {
      s.shards.push_back({item.key(), t, shardDim});
      continue;
    }
    bool tied = item.key() == models::kTiedEmbeddingName && s.spec.tiedEmbeddings;
    bool replicatedOverTp = shardDim == tensor_parallel::kReplicated;
    bool counted = !(replicatedOverTp && s.groups.coord.tp != 0) &&
                   !(tied && s.groups.coord.pp != firstStageRank(s));
    s.parameters.push_back(t);
    s.shards.push_back({item.key(), t, shardDim});
    s.normTerms.push_back({t, counted});
    named.push_back({item.key(), t});
    if (tied) s.tiedWeight = t;
  }
  return named;
}

// A weight tied across the pipeline (the embedding reused as the head) lives
// on the first and the last stage; when those run on two ranks their copies
// are kept equal through a group of the two. (In a V both are on rank 0,
// which holds one copy used twice.)
void Trainer::linkTiedWeight() {
  State& s = *state_;
  if (!s.tiedWeight.defined() || firstStageRank(s) == lastStageRank(s)) return;
  Coord first = s.groups.coord, last = s.groups.coord;
  first.pp = firstStageRank(s);
  last.pp = lastStageRank(s);
  s.tiedGroup =
      world_->newGroup("tied[dp=" + std::to_string(first.dp) + ",cp=" + std::to_string(first.cp) +
                           ",tp=" + std::to_string(first.tp) + "]",
                       {s.layout.rankOf(first), s.layout.rankOf(last)});
}

void Trainer::openData(const DataSplit& data) {
  State& s = *state_;
  int64_t dpRank = s.groups.coord.dp;
  s.lossMasked = data.lossMasked;
  s.packing = data.train.packing();
  s.trainData = std::make_unique<BatchReader>(makeTrainReader(data, config_, dpRank));
  s.validationData = std::make_unique<BatchReader>(makeValidationReader(data, config_, dpRank));
}

Trainer::~Trainer() = default;

const ParallelLayout& Trainer::layout() const { return state_->layout; }
const ParallelGroups& Trainer::groups() const { return state_->groups; }
const pipeline::Pipeline& Trainer::pipeline() const { return *state_->pipeline; }
bool Trainer::lossMasked() const { return state_->lossMasked; }
const PackingStats& Trainer::packing() const { return state_->packing; }
int64_t Trainer::parameterCount() const {
  return models::modelFamily(state_->spec.architecture).parameterCount(state_->spec);
}
std::vector<ParameterShard> Trainer::parameterShards() const {
  const State& s = *state_;
  if (!s.fullySharded) return s.shards;
  std::vector<at::Tensor> tensors;
  for (const ParameterShard& shard : s.shards) tensors.push_back(shard.tensor);
  tensors = s.fullySharded->gatheredCopies(tensors);
  std::vector<ParameterShard> copies = s.shards;
  for (size_t i = 0; i < copies.size(); ++i) copies[i].tensor = tensors[i];
  return copies;
}

double Trainer::runBatch(const Batch& batch) {
  State& s = *state_;
  PrecisionGuard precision(config_.train.precision, s.device.type());
  // Micro-batches only accumulate until each parameter's last gradient is
  // due; from there the buckets reduce as they fill, during the last
  // micro-batch's backward (of each model chunk, when the rank runs several).
  AccumulateOnly accumulate(s);
  pipeline::StepHooks hooks = packedDocumentHooks(s.documents.get(), batch, config_.microBatches());
  hooks.beforeLastWeightGradients = [&s] { startSyncOf(s, Trainer::State::kEveryStage); };
  hooks.beforeStageLastWeightGradients = [&s](int stage) { startSyncOf(s, stage); };
  countTargets(s, batch.target, config_.microBatches());
  SelectedDocuments selected(s.documents.get());
  return s.pipeline->step(s.localTokens(batch.input), s.localTokens(batch.target), s.lossFn, hooks);
}

// Data parallelism first: its buckets, the tied weight's among them, may be
// reducing already, and nothing else may write to them until they are done.
// Both reductions are sums, so their order does not change the result.
void Trainer::syncGradients() {
  State& s = *state_;
  for (auto& replicas : s.replicaSets) replicas->finishGradientSync();
  if (s.fullySharded) {
    s.fullySharded->finishGradientSync();
    // Both stages shard the tied weight alike (a unit of its own).
    if (s.tiedGroup) {
      at::Tensor shard = s.fullySharded->tiedGradient();
      s.tiedGroup->allReduce(shard);
    }
    return;
  }
  if (s.tiedGroup) {
    // d loss / d E = (embedding's part, first stage) + (head's part, last stage).
    at::Tensor grad = s.tiedWeight.grad();
    if (!grad.defined()) grad = s.tiedWeight.mutable_grad() = torch::zeros_like(s.tiedWeight);
    s.tiedGroup->allReduce(grad);
  }
}

StepReport Trainer::step() {
  State& s = *state_;
  auto start = std::chrono::steady_clock::now();
  StepReport report;
  report.lr = lr_.current();
  zeroGradients();
  // Global micro-batch index of this replica's first: replica r reads rows
  // [r*B/dp, (r+1)*B/dp) of the global batch (batch_reader.h).
  int64_t replicaMicroBatches = config_.microBatches();
  int64_t globalMicroBatches = config_.train.globalBatch / config_.train.microBatch;
  tensor_parallel::setDropoutCalls(
      *s.model, stepsDone() * globalMicroBatches + s.groups.coord.dp * replicaMicroBatches);
  double localLoss = runBatch(s.trainData->next());
  syncGradients();
  report.gradNorm =
      globalGradNorm(s.gradients, {*s.replicas, *s.groups.tp, *s.groups.pp, s.expertGroup.get()});
  if (s.experts) report.moe = gatherMoeReport(*s.experts, *s.replicas, *s.groups.pp);
  // The pipeline returns the loss on every pp rank; averaged over dp (and
  // cp: each cp rank's loss is the mean over as many tokens) it is the same
  // everywhere, as the norm is, so every rank decides alike.
  at::Tensor loss = torch::full({1}, localLoss, torch::kDouble);
  s.replicas->allReduce(loss, ReduceOp::kAvg);
  report.loss = loss.item<double>();
  report.skipped = !std::isfinite(report.loss) || !std::isfinite(report.gradNorm);
  if (!report.skipped) optimizerStep(clipScale(report.gradNorm, config_.train.gradClip));
  lr_.advance();
  report.step = stepsDone();
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const auto& events = s.pipeline->lastStep().events;
  std::vector<double> bubbles =
      pipeline::measuredBubbleFractions(events, s.layout.degree(Dim::kPipeline));
  int ppRank = s.groups.coord.pp;
  report.bubble = ppRank < static_cast<int>(bubbles.size()) ? bubbles[ppRank] : 0;
  for (const pipeline::TraceEvent& e : events)
    if (!e.isWait) report.computeSeconds += e.end - e.start;
  return report;
}

double Trainer::evaluate(int64_t batches) {
  State& s = *state_;
  EvalMode evalMode(s.model);
  s.validationData->seek(DataPosition{});
  double sum = 0;
  PrecisionGuard precision(config_.train.precision, s.device.type());
  for (int64_t i = 0; i < batches; ++i) {
    Batch batch = s.validationData->next();
    countTargets(s, batch.target, config_.microBatches());
    pipeline::StepHooks hooks =
        packedDocumentHooks(s.documents.get(), batch, config_.microBatches());
    SelectedDocuments selected(s.documents.get());
    sum += s.pipeline->evaluate(s.localTokens(batch.input), s.localTokens(batch.target), s.lossFn,
                                hooks);
  }
  if (s.fullySharded) s.fullySharded->reshard();
  at::Tensor loss = torch::full({1}, sum / static_cast<double>(batches), torch::kDouble);
  s.replicas->allReduce(loss, ReduceOp::kAvg);
  return loss.item<double>();
}

std::vector<pipeline::TraceEvent> Trainer::gatherLastTrace() const {
  return pipeline::gatherEvents(*state_->groups.pp, state_->pipeline->lastStep().events);
}

}  // namespace strata::train
