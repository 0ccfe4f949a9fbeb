// The Trainer's optimizer: gradient averaging over the replicas (plain data
// parallelism, ZeRO-1/2 replica sets, or ZeRO-3's fully sharded units), the
// experts' over their own replicas under expert parallelism, what clipping
// measures, and the step itself.
#include <torch/torch.h>

#include <map>
#include <set>

#include "strata/config/optimizer.h"
#include "strata/data_parallel/data_parallel.h"
#include "strata/data_parallel/flat_optimizer.h"
#include "strata/data_parallel/zero_optimizer.h"
#include "strata/models/model_family.h"
#include "strata/train/trainer.h"
#include "train/fully_sharded_training.h"
#include "train/moe_training.h"
#include "train/trainer_state.h"

namespace strata::train {
namespace {

// ZeRO with the decay policy of makeAdamW (optimizer.h): matrices decay,
// vectors do not, so each group gets its own replica set and sharded AdamW.
// Under ZeRO-2 a weight tied across pipeline stages keeps whole averaged
// gradients in a set of its own: its two stages' copies must be summed
// whole, and the stages' sets cut it into different chunks.
void buildZero(Trainer::State& s, const std::vector<data_parallel::NamedTensor>& named,
               const OptimConfig& c, int64_t stage, Communicator& replicas) {
  enum { kDecayed, kPlain, kTied, kGroups };
  std::vector<data_parallel::NamedTensor> groups[kGroups];
  for (const auto& item : named) {
    bool tied = s.tiedGroup && item.tensor.is_same(s.tiedWeight);
    groups[stage == 2 && tied ? kTied : item.tensor.dim() >= 2 ? kDecayed : kPlain].push_back(item);
  }
  for (int g = 0; g < kGroups; ++g) {
    if (groups[g].empty()) continue;
    data_parallel::AdamWConfig adam{c.lr, c.beta1, c.beta2, c.eps,
                                    g == kPlain ? 0.0 : c.weightDecay};
    data_parallel::DataParallelOptions options;
    if (stage == 2 && g != kTied)
      options.reduction = data_parallel::GradientReduction::kReduceScatter;
    s.replicaSets.push_back(
        std::make_unique<data_parallel::DataParallel>(groups[g], replicas, options));
    s.zero.push_back(std::make_unique<data_parallel::ZeroOptimizer>(
        *s.replicaSets.back(), std::make_unique<data_parallel::FlatAdamW>(adam)));
  }
}

// What clipping measures: whole gradients, except those a ZeRO-2 replica set
// holds only as this rank's chunks, which are measured chunk by chunk, the
// slots of parameters counted on another rank (by their NormTerm) apart.
// Under expert parallelism the experts' whole gradients differ between ep
// ranks and are measured apart (summed over ep).
GradientTerms gradientTerms(const Trainer::State& s) {
  std::set<c10::TensorImpl*> counted, chunked;
  for (const NormTerm& term : s.normTerms)
    if (term.countHere) counted.insert(term.parameter.unsafeGetTensorImpl());
  GradientTerms gradients;
  for (const auto& replicas : s.replicaSets) {
    if (replicas->options().reduction != data_parallel::GradientReduction::kReduceScatter) continue;
    const data_parallel::BucketLayout& layout = replicas->layout();
    const std::vector<at::Tensor>& params = replicas->parameters();
    std::vector<FlatSpan> notCounted;
    for (size_t i = 0; i < params.size(); ++i) {
      chunked.insert(params[i].unsafeGetTensorImpl());
      const data_parallel::ParamSlot& slot = layout.slot(static_cast<int>(i));
      if (!contains(counted, params[i])) notCounted.push_back({slot.offset, slot.numel});
    }
    int dpRank = replicas->comm().rank();
    for (int b = 0; b < static_cast<int>(layout.buckets().size()); ++b) {
      gradients.sharded.push_back(
          shardedNormTerm(replicas->ownedGradient(b), layout.chunkOffset(b, dpRank), notCounted));
    }
  }
  std::set<c10::TensorImpl*> experts;
  if (s.expertGroup)
    for (const ParameterShard& shard : s.shards)
      if (expert_parallel::isExpertParameter(shard.name))
        experts.insert(shard.tensor.unsafeGetTensorImpl());
  for (const NormTerm& term : s.normTerms) {
    if (contains(chunked, term.parameter)) continue;
    (contains(experts, term.parameter) ? gradients.expertTerms : gradients.terms).push_back(term);
  }
  return gradients;
}

// This rank's parameters grouped by the model chunk (pipeline stage) whose
// last weight gradients complete them, in `named`'s order within a group: one
// group of every parameter when the rank runs one stage. A parameter two
// stages share (a tied weight in a V) goes with the later.
std::vector<std::pair<int, std::vector<data_parallel::NamedTensor>>> groupByChunk(
    const Trainer::State& s, const std::vector<data_parallel::NamedTensor>& named) {
  std::vector<int> finishOrder = s.pipeline->stagesByLastWeightGradients();
  if (s.pipeline->stages().size() < 2 || finishOrder.size() < 2)
    return {{Trainer::State::kEveryStage, named}};
  std::map<int, const pipeline::Stage*> byIndex;
  for (const pipeline::Stage& stage : s.pipeline->stages()) byIndex[stage.index()] = &stage;
  std::map<c10::TensorImpl*, int> chunkOf;
  for (auto it = finishOrder.rbegin(); it != finishOrder.rend(); ++it)
    for (const at::Tensor& t : byIndex.at(*it)->parameters())
      chunkOf.emplace(t.unsafeGetTensorImpl(), *it);
  std::vector<std::pair<int, std::vector<data_parallel::NamedTensor>>> groups;
  for (int stage : finishOrder) {
    std::vector<data_parallel::NamedTensor> members;
    for (const auto& item : named)
      if (chunkOf.at(item.tensor.unsafeGetTensorImpl()) == stage) members.push_back(item);
    if (!members.empty()) groups.emplace_back(stage, std::move(members));
  }
  return groups;
}

}  // namespace

// Plain data parallelism or ZeRO-1/2 over one group of parameters; the sets
// it adds are completed by `stage`'s last weight gradients.
void Trainer::buildReplicaSets(const std::vector<data_parallel::NamedTensor>& named, int stage) {
  State& s = *state_;
  int64_t zero = config_.parallel.zero;
  // At ep > 1 the experts average over their own replicas (moe_training.h).
  ExpertSplit split;
  if (s.expertGroup) {
    split = splitExpertParameters(named);
  } else {
    split.common = named;
  }
  if (zero > 0) {
    buildZero(s, split.common, config_.train, zero, *s.replicas);
    if (!split.experts.empty()) buildZero(s, split.experts, config_.train, zero, *s.expertReplicas);
  } else {
    if (s.replicas->size() > 1 && !split.common.empty())
      s.replicaSets.push_back(
          std::make_unique<data_parallel::DataParallel>(split.common, *s.replicas));
    if (s.expertReplicas && s.expertReplicas->size() > 1 && !split.experts.empty())
      s.replicaSets.push_back(
          std::make_unique<data_parallel::DataParallel>(split.experts, *s.expertReplicas));
  }
  s.replicaSetStages.resize(s.replicaSets.size(), stage);
}

void Trainer::buildOptimizer(const std::vector<data_parallel::NamedTensor>& named) {
  State& s = *state_;
  int64_t zero = config_.parallel.zero;
  if (s.expertGroup) {
    divideExpertGradients(splitExpertParameters(named).experts, s.expertGroup->size());
  }
  if (zero == 3) {
    // The layers are shells (buildModel): each is built again, alone, as
    // its units are sharded.
    LayerBuilder buildLayer = [&s](int layer) {
      return models::modelFamily(s.spec.architecture)
          .buildLayer(s.spec, layer, s.groups.tp, s.contextParallel, s.experts);
    };
    // A frozen base (LoRA) is sharded too, gathered with the adapters.
    std::vector<data_parallel::NamedTensor> held = named;
    at::Tensor tied = s.tiedWeight;
    for (const ParameterShard& shard : s.shards) {
      if (shard.tensor.requires_grad()) continue;
      held.push_back({shard.name, shard.tensor});
      if (s.spec.tiedEmbeddings && shard.name == models::kTiedEmbeddingName) tied = shard.tensor;
    }
    s.fullySharded = std::make_unique<FullyShardedTraining>(
        s.pipeline->stages(), held, tied, config_.train, config_.parallel.reshardAfterForward,
        buildLayer, *s.replicas, s.expertGroup ? s.expertReplicas.get() : nullptr);
    s.gradients = s.fullySharded->gradientTerms(s.normTerms);
    return;
  }
  for (const auto& [stage, members] : groupByChunk(s, named)) buildReplicaSets(members, stage);
  if (zero == 0) {
    s.optimizer = makeAdamW(s.parameters, config_.train);
    // The experts when each has a single holder (ep = dp x cp) while other
    // parameters are replicated: zeroed apart.
    std::set<c10::TensorImpl*> held;
    for (const auto& replicas : s.replicaSets)
      for (const at::Tensor& t : replicas->parameters()) held.insert(t.unsafeGetTensorImpl());
    if (!held.empty())
      for (const auto& item : named)
        if (!contains(held, item.tensor)) s.unreplicated.push_back(item.tensor);
  }
  s.gradients = gradientTerms(s);
}

// Clipping's factor is taken by AdamW as it reads each gradient (one pass
// over them fewer); the sharded optimizers read gradients scaled first.
void Trainer::optimizerStep(double gradScale) {
  State& s = *state_;
  if (s.optimizer) {
    lr_.apply(*s.optimizer);
    s.optimizer->stepOnScaledGradients(gradScale);
    return;
  }
  scaleGradients(s.gradients, gradScale);
  if (s.fullySharded) s.fullySharded->step(lr_.current());
  for (auto& zero : s.zero) {
    zero->setLearningRate(lr_.current());
    zero->stepAfterSync();
  }
}

void Trainer::zeroGradients() {
  State& s = *state_;
  if (s.fullySharded) {
    s.fullySharded->zeroGrad();
  } else if (s.replicaSets.empty()) {
    // Released, not zeroed: zeroing is a pass over every gradient, and the
    // backward's first contribution is then added to the zeros in another,
    // where a released gradient takes the contribution itself (LibTorch's
    // gradient accumulation keeps a fresh gradient it is given). A parameter
    // the backward does not reach keeps none, and AdamW leaves it alone, as
    // data parallelism does with a parameter no replica used.
    for (at::Tensor& parameter : s.parameters) parameter.mutable_grad().reset();
  } else {
    for (auto& replicas : s.replicaSets) replicas->zeroGrad();
    for (at::Tensor& t : s.unreplicated)
      if (t.grad().defined()) t.mutable_grad().zero_();
  }
}

}  // namespace strata::train
