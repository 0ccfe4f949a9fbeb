#include "reference_training.h"

#include <ATen/autocast_mode.h>

#include <cmath>
#include <limits>

#include "reference_gpt.h"
#include "reference_llama.h"
#include "strata/models/model_family.h"
#include "strata/runtime/world.h"
#include "strata/train/data_source.h"
#include "strata/train/trainer.h"
#include "trainer_test_util.h"

namespace strata::train::testing {
namespace {

// Linear warmup to the peak over warmup_steps, then cosine decay to min_lr at
// the last step (the schedule strata train documents).
double learningRate(const OptimConfig& c, int64_t step) {
  if (step < c.warmupSteps)
    return c.lr * static_cast<double>(step + 1) / static_cast<double>(c.warmupSteps);
  if (step >= c.steps) return c.minLr;
  double progress =
      static_cast<double>(step - c.warmupSteps) / static_cast<double>(c.steps - c.warmupSteps);
  return c.minLr + (c.lr - c.minLr) * 0.5 * (1.0 + std::cos(M_PI * progress));
}

// The starting weights: a one-process Strata model from the config's seed.
std::map<std::string, torch::Tensor> strataInitialWeights(const TrainConfig& config) {
  auto world = singleProcessWorld();
  ParallelGroups groups = world->parallelGroups(ParallelLayout(1, {1, 1, 1, 1}));
  models::ModelSpec spec = modelSpecOf(config);
  torch::nn::Sequential model = models::modelFamily(spec.architecture).build(spec, groups.tp);
  std::map<std::string, torch::Tensor> weights;
  for (const auto& item : model->named_parameters()) {
    if (item.key() == models::kTiedHeadName) continue;  // the embedding's own tensor
    weights[item.key()] = item.value().detach().clone();
  }
  return weights;
}

// The reference MoE settings of a config, for either family's reference.
template <typename Reference>
void setMoe(Reference& r, const TrainConfig& c) {
  const expert_parallel::MoeOptions& moe = c.model.moe;
  r.moe = {moe.experts, moe.topK, moe.normalizeTopK, moe.capacityFactor};
  r.moeEvery = moe.every;
  r.sharedExperts = moe.sharedExperts > 0;
  r.auxLossCoeff = moe.auxLossCoeff;
  r.zLossCoeff = moe.zLossCoeff;
}

strata::testing::ReferenceLlamaConfig referenceLlamaConfig(const TrainConfig& c) {
  strata::testing::ReferenceLlamaConfig r;
  r.layers = c.model.layers;
  r.hidden = c.model.hidden;
  r.heads = c.model.heads;
  r.kvHeads = c.model.kvHeads > 0 ? c.model.kvHeads : c.model.heads;
  r.ffn = c.model.ffn;
  r.vocab = c.model.vocab;
  r.ropeTheta = c.model.ropeTheta;
  if (c.model.ropeScaling.enabled()) {
    const tensor_parallel::RopeScaling& s = c.model.ropeScaling;
    r.ropeScaling = {s.factor, s.lowFreqFactor, s.highFreqFactor,
                     static_cast<double>(s.originalContext)};
  }
  r.rmsNormEps = c.model.rmsNormEps;
  r.tiedEmbeddings = c.model.tiedEmbeddings;
  setMoe(r, c);
  if (c.finetune.lora()) {
    r.loraRank = c.finetune.rank;
    r.loraAlpha = c.finetune.alpha;
    r.loraTargets = c.finetune.targets;
    r.loraDropout = c.finetune.dropout;
    r.seed = static_cast<uint64_t>(c.train.seed);
  }
  return r;
}

strata::testing::ReferenceGptConfig referenceConfig(const TrainConfig& c) {
  strata::testing::ReferenceGptConfig r;
  r.layers = c.model.layers;
  r.hidden = c.model.hidden;
  r.heads = c.model.heads;
  r.ffn = c.model.ffn;
  r.vocab = c.model.vocab;
  r.context = c.model.context;
  r.dropout = c.model.dropout;
  r.tiedEmbeddings = c.model.tiedEmbeddings;
  r.geluTanh = c.model.architecture == kGpt2Architecture;
  r.seed = static_cast<uint64_t>(c.train.seed);
  setMoe(r, c);
  return r;
}

// The family's reference: written separately from Strata's layers.
std::unique_ptr<strata::testing::ReferenceModel> referenceModelFor(const TrainConfig& c) {
  if (c.model.architecture == kLlamaArchitecture)
    return std::make_unique<strata::testing::ReferenceLlama>(referenceLlamaConfig(c));
  return std::make_unique<strata::testing::ReferenceGpt>(referenceConfig(c));
}

torch::optim::AdamW makeReferenceAdamW(const std::vector<torch::Tensor>& trainable,
                                       const OptimConfig& c) {
  std::vector<torch::Tensor> matrices, vectors;
  for (const torch::Tensor& t : trainable) (t.dim() >= 2 ? matrices : vectors).push_back(t);
  auto options = [&](double decay) {
    return std::make_unique<torch::optim::AdamWOptions>(
        torch::optim::AdamWOptions(c.lr).betas({c.beta1, c.beta2}).eps(c.eps).weight_decay(decay));
  };
  std::vector<torch::optim::OptimizerParamGroup> groups;
  groups.emplace_back(matrices, options(c.weightDecay));
  groups.emplace_back(vectors, options(0.0));
  return torch::optim::AdamW(std::move(groups));
}

// The targets the reference counts: the batch's, and with packed documents
// (Batch::segments) none where a document ends inside its window, since
// the token after it is another document's.
torch::Tensor countedTargetsOf(const Batch& batch) {
  if (!batch.segments.defined()) return batch.target;
  torch::Tensor targets = batch.target.clone();
  torch::Tensor endsHere = batch.segments.narrow(1, 1, batch.segments.size(1) - 1)
                               .ne(batch.segments.narrow(1, 0, batch.segments.size(1) - 1));
  targets.narrow(1, 0, targets.size(1) - 1).masked_fill_(endsHere, -1);
  return targets;
}

// The loss summed over every document of the rows [b, S], each run through
// the model alone: its own forward, its positions from 0, seeing nothing
// of the documents packed with it.
torch::Tensor documentsAloneLossSum(strata::testing::ReferenceModel& model,
                                    const torch::Tensor& ids, const torch::Tensor& targets,
                                    const torch::Tensor& segments, int64_t call, bool train) {
  torch::Tensor sum = torch::zeros({}, torch::kFloat);
  for (int64_t row = 0; row < ids.size(0); ++row) {
    torch::Tensor owner = segments[row];
    for (int64_t start = 0, end = 0; start < owner.size(0); start = end) {
      while (end < owner.size(0) && owner[end].item<int64_t>() == owner[start].item<int64_t>())
        ++end;
      auto part = [&](const torch::Tensor& t) {
        return t.narrow(0, row, 1).narrow(1, start, end - start);
      };
      sum = sum + model.maskedLossSum(part(ids), part(targets), call, train);
    }
  }
  return sum;
}

// Mean loss of one global batch, micro-batch by micro-batch; with `train`
// the gradients of that mean accumulate. With a loss mask or packed
// documents (targets of -1) the mean is over the global batch's counted
// targets: each micro-batch's sum over its own, divided by their count in
// the whole batch; packed, each document's sum from its own forward.
double runGlobalBatch(strata::testing::ReferenceModel& model, const Batch& batch,
                      int64_t microBatch, int64_t firstCall, bool train, bool masked) {
  int64_t m = batch.input.size(0) / microBatch;
  const bool packed = batch.segments.defined();
  const torch::Tensor counted = countedTargetsOf(batch);
  const double count = counted.ge(0).sum().item<double>();
  double sum = 0;
  for (int64_t j = 0; j < m; ++j) {
    auto rows = [&](const torch::Tensor& t) { return t.narrow(0, j * microBatch, microBatch); };
    torch::Tensor ids = rows(batch.input), targets = rows(counted);
    torch::Tensor loss;
    if (packed)
      loss =
          documentsAloneLossSum(model, ids, targets, rows(batch.segments), firstCall + j, train) *
          (static_cast<double>(m) / count);
    else if (masked)
      loss = model.maskedLossSum(ids, targets, firstCall + j, train) *
             (static_cast<double>(m) / count);
    else
      loss = model.loss(ids, targets, firstCall + j, train);
    torch::Tensor routing = model.routingLoss();
    if (train) ((routing.defined() ? loss + routing : loss) / static_cast<double>(m)).backward();
    sum += loss.item<double>();
  }
  return sum / static_cast<double>(m);
}

// Turns CPU autocast to bf16 on for its lifetime when `on`.
class ReferenceAutocast {
 public:
  explicit ReferenceAutocast(bool on) : on_(on) {
    if (!on_) return;
    at::autocast::set_autocast_enabled(at::kCPU, true);
    at::autocast::set_autocast_dtype(at::kCPU, at::kBFloat16);
  }
  ~ReferenceAutocast() {
    if (!on_) return;
    at::autocast::set_autocast_enabled(at::kCPU, false);
    at::autocast::clear_cache();
  }
  ReferenceAutocast(const ReferenceAutocast&) = delete;
  ReferenceAutocast& operator=(const ReferenceAutocast&) = delete;

 private:
  bool on_;
};

}  // namespace

ReferenceRun trainReference(const TrainConfig& config, int steps) {
  TrainConfig oneReplica = config;
  oneReplica.parallel = ParallelConfig{};
  std::unique_ptr<strata::testing::ReferenceModel> reference = referenceModelFor(config);
  strata::testing::ReferenceModel& model = *reference;
  model.load(strataInitialWeights(oneReplica));
  DataSplit data = makeDataSplit(oneReplica);
  BatchReader train = makeTrainReader(data, oneReplica, 0);
  const OptimConfig& c = config.train;
  std::vector<torch::Tensor> trainable = model.trainable();
  torch::optim::AdamW optimizer = makeReferenceAdamW(trainable, c);
  int64_t microBatches = c.globalBatch / c.microBatch;

  // train.precision = "bf16": the matrix products in bf16 under CPU autocast,
  // set here by hand, the rest (norms, softmax, the loss) in float32.
  ReferenceAutocast autocast(c.precision == "bf16");
  ReferenceRun run;
  for (int step = 0; step < steps; ++step) {
    for (auto& group : optimizer.param_groups())
      static_cast<torch::optim::AdamWOptions&>(group.options()).lr(learningRate(c, step));
    optimizer.zero_grad();
    run.losses.push_back(runGlobalBatch(model, train.next(), c.microBatch, step * microBatches,
                                        /*train=*/true, data.lossMasked));
    run.gradNorms.push_back(torch::nn::utils::clip_grad_norm_(
        trainable, c.gradClip > 0 ? c.gradClip : std::numeric_limits<double>::infinity()));
    optimizer.step();
  }
  {
    torch::NoGradGuard noGrad;
    BatchReader validation = makeValidationReader(data, oneReplica, 0);
    run.validationLoss =
        runGlobalBatch(model, validation.next(), c.microBatch, 0, false, data.lossMasked);
  }
  run.parameters = model.parameters();
  return run;
}

}  // namespace strata::train::testing
