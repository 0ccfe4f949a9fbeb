#include "train/fully_sharded_training.h"

#include <torch/torch.h>

#include <set>
#include <unordered_map>

#include "strata/data_parallel/flat_optimizer.h"
#include "strata/error.h"
#include "strata/expert_parallel/expert_parallel.h"

namespace strata::train {
namespace {

using data_parallel::NamedTensor;
using data_parallel::ShardedUnit;

struct UnitPlan {
  std::vector<ShardedUnit> units;
  std::map<int, std::vector<int>> layerUnits;
  int tiedUnit = -1;
  // With `splitExperts`: each layer's routed experts, units of their own.
  std::vector<ShardedUnit> expertUnits;
  std::map<int, std::vector<int>> layerExpertUnits;
};

// A trained parameter is listed among the unit's parameters, a frozen one
// among its frozen ones.
void listIn(ShardedUnit& unit, const NamedTensor& p) {
  (p.tensor.requires_grad() ? unit.parameters : unit.frozen).push_back(p);
}

UnitPlan planUnits(const std::vector<pipeline::Stage>& stages,
                   const std::vector<NamedTensor>& named, const at::Tensor& tiedWeight,
                   bool splitExperts) {
  std::unordered_map<const void*, std::string> names;
  for (const NamedTensor& p : named) names[p.tensor.unsafeGetTensorImpl()] = p.name;
  UnitPlan plan;
  std::set<const void*> placed;
  for (const pipeline::Stage& stage : stages) {
    for (int k = 0; k < stage.numLayers(); ++k) {
      int layer = stage.firstLayer() + k;
      ShardedUnit own{"layer" + std::to_string(layer), {}, {}};
      ShardedUnit experts{"layer" + std::to_string(layer) + ".experts", {}, {}};
      std::vector<int>& units = plan.layerUnits[layer];
      for (const at::Tensor& p : stage.layers()[k].ptr()->parameters()) {
        const void* key = p.unsafeGetTensorImpl();
        if (names.count(key) == 0) continue;
        if (tiedWeight.defined() && p.is_same(tiedWeight)) {
          if (plan.tiedUnit < 0) {
            plan.tiedUnit = static_cast<int>(plan.units.size());
            plan.units.push_back({"tied", {}, {}});
            listIn(plan.units.back(), {names[key], p});
          }
          units.insert(units.begin(), plan.tiedUnit);
          placed.insert(key);
          continue;
        }
        if (!placed.insert(key).second) continue;
        bool expert = splitExperts && expert_parallel::isExpertParameter(names[key]);
        listIn(expert ? experts : own, {names[key], p});
      }
      if (!experts.parameters.empty() || !experts.frozen.empty()) {
        plan.layerExpertUnits[layer].push_back(static_cast<int>(plan.expertUnits.size()));
        plan.expertUnits.push_back(std::move(experts));
      }
      if (own.parameters.empty() && own.frozen.empty()) continue;
      units.push_back(static_cast<int>(plan.units.size()));
      plan.units.push_back(std::move(own));
    }
  }
  if (placed.size() != names.size()) {
    throw Error("ZeRO-3: " + std::to_string(names.size() - placed.size()) +
                " of this rank's parameters belong to none of its pipeline stages' layers");
  }
  return plan;
}

// The layer of each unit, by unit index.
std::vector<int> unitLayers(const std::map<int, std::vector<int>>& layerUnits, size_t units) {
  std::vector<int> layers(units, -1);
  for (const auto& [layer, ids] : layerUnits)
    for (int u : ids)
      if (layers[u] < 0) layers[u] = layer;
  return layers;
}

// Gives a unit of shells its values: each parameter is set onto the
// same-named one of its layer built afresh ("block3.mlp.fc1.weight" is
// "mlp.fc1.weight" there), which the unit's sharding then copies and drops.
std::function<void(int, const ShardedUnit&)> unitInitialiser(const LayerBuilder& buildLayer,
                                                             std::vector<int> layers) {
  return [buildLayer, layers = std::move(layers)](int unit, const ShardedUnit& spec) {
    std::shared_ptr<torch::nn::Module> fresh = buildLayer(layers[unit]);
    auto values = fresh->named_parameters();
    torch::NoGradGuard noGrad;
    std::vector<NamedTensor> all = spec.parameters;
    all.insert(all.end(), spec.frozen.begin(), spec.frozen.end());
    for (const NamedTensor& p : all) {
      std::string path = p.name.substr(p.name.find('.') + 1);
      const at::Tensor* value = values.find(path);
      if (value == nullptr || !value->sizes().equals(p.tensor.sizes())) {
        throw Error("ZeRO-3: layer " + std::to_string(layers[unit]) + " built afresh has no '" +
                    path + "' of the shape of '" + p.name + "'");
      }
      at::Tensor target = p.tensor;
      // In the shell's dtype: a bf16 base's projections (frozen_base.h).
      target.set_(value->detach().to(target.scalar_type()));
    }
  };
}

}  // namespace

FullyShardedTraining::FullyShardedTraining(const std::vector<pipeline::Stage>& stages,
                                           const std::vector<NamedTensor>& named,
                                           const at::Tensor& tiedWeight, const OptimConfig& config,
                                           bool reshardAfterForward, const LayerBuilder& buildLayer,
                                           Communicator& dp, Communicator* expertReplicas) {
  UnitPlan plan = planUnits(stages, named, tiedWeight, expertReplicas != nullptr);
  layerUnits_ = std::move(plan.layerUnits);
  layerExpertUnits_ = std::move(plan.layerExpertUnits);
  tiedUnit_ = plan.tiedUnit;
  data_parallel::FullyShardedOptions options;
  options.reshardAfterForward = reshardAfterForward;
  std::vector<int> layers = unitLayers(layerUnits_, plan.units.size());
  if (tiedUnit_ >= 0) layers[tiedUnit_] = 0;
  options.initUnit = unitInitialiser(buildLayer, std::move(layers));
  fsdp_ =
      std::make_unique<data_parallel::FullyShardedDataParallel>(std::move(plan.units), dp, options);
  addOptimizers(*fsdp_, config);
  if (expertReplicas == nullptr) return;
  options.initUnit =
      unitInitialiser(buildLayer, unitLayers(layerExpertUnits_, plan.expertUnits.size()));
  experts_ = std::make_unique<data_parallel::FullyShardedDataParallel>(std::move(plan.expertUnits),
                                                                       *expertReplicas, options);
  addOptimizers(*experts_, config);
}

void FullyShardedTraining::addOptimizers(data_parallel::FullyShardedDataParallel& set,
                                         const OptimConfig& config) {
  for (bool decayed : {true, false}) {
    data_parallel::AdamWConfig adam{config.lr, config.beta1, config.beta2, config.eps,
                                    decayed ? config.weightDecay : 0.0};
    auto filter = [&set, decayed](int unit, int param) {
      return (set.unit(unit).parameters[param].tensor.dim() >= 2) == decayed;
    };
    optimizers_.push_back(std::make_unique<data_parallel::FullyShardedOptimizer>(
        set, std::make_unique<data_parallel::FlatAdamW>(adam), filter));
  }
}

std::vector<data_parallel::FullyShardedDataParallel*> FullyShardedTraining::sets() const {
  std::vector<data_parallel::FullyShardedDataParallel*> all{fsdp_.get()};
  if (experts_) all.push_back(experts_.get());
  return all;
}

void FullyShardedTraining::finishGradientSync() {
  for (auto* set : sets()) set->finishGradientSync();
}
void FullyShardedTraining::setRequireSync(bool on) {
  for (auto* set : sets()) set->setRequireSync(on);
}
void FullyShardedTraining::zeroGrad() {
  for (auto* set : sets()) set->zeroGrad();
}
void FullyShardedTraining::reshard() {
  for (auto* set : sets()) set->reshard();
}
void FullyShardedTraining::gatherAll() {
  for (auto* set : sets()) set->gatherAll();
}
void FullyShardedTraining::commitParameters() {
  for (auto* set : sets()) set->commitParameters();
}

at::Tensor FullyShardedTraining::forwardLayer(int layer, const at::Tensor& input,
                                              const pipeline::LayerBody& run) {
  // The layer's units of every set: (set, unit).
  std::vector<std::pair<data_parallel::FullyShardedDataParallel*, int>> units;
  for (int u : layerUnits_[layer]) units.emplace_back(fsdp_.get(), u);
  if (experts_)
    for (int u : layerExpertUnits_[layer]) units.emplace_back(experts_.get(), u);
  // Nested, so every unit of the layer is gathered while it runs, each
  // watching the input for the end of the layer's backward.
  std::function<at::Tensor(size_t, const at::Tensor&)> enter = [&](size_t i, const at::Tensor& x) {
    if (i == units.size()) return run(x);
    return units[i].first->forward(units[i].second, x,
                                   [&](const at::Tensor& y) { return enter(i + 1, y); });
  };
  return enter(0, input);
}

GradientTerms FullyShardedTraining::gradientTerms(const std::vector<NormTerm>& normTerms) const {
  std::set<const void*> counted;
  for (const NormTerm& term : normTerms)
    if (term.countHere) counted.insert(term.parameter.unsafeGetTensorImpl());
  // An expert shard is cut over the expert replicas, so summed over all of
  // dp x cp with the others it counts every expert of the ep group once.
  GradientTerms gradients;
  for (auto* set : sets()) {
    int rank = set->comm().rank();
    for (int u = 0; u < set->numUnits(); ++u) {
      const data_parallel::BucketLayout& layout = set->layout(u);
      if (layout.numParams() == 0) continue;  // frozen parameters alone
      const std::vector<NamedTensor>& params = set->unit(u).parameters;
      std::vector<FlatSpan> notCounted;
      for (size_t i = 0; i < params.size(); ++i) {
        if (counted.count(params[i].tensor.unsafeGetTensorImpl()) != 0) continue;
        const data_parallel::ParamSlot& slot = layout.slot(static_cast<int>(i));
        notCounted.push_back({slot.offset, slot.numel});
      }
      gradients.sharded.push_back(
          shardedNormTerm(set->gradientShard(u), layout.chunkOffset(0, rank), notCounted));
    }
  }
  return gradients;
}

at::Tensor FullyShardedTraining::tiedGradient() const {
  if (tiedUnit_ < 0 || fsdp_->unit(tiedUnit_).parameters.empty()) return {};
  return fsdp_->gradientShard(tiedUnit_);
}

void FullyShardedTraining::step(double lr) {
  for (auto& optimizer : optimizers_) {
    optimizer->setLearningRate(lr);
    optimizer->stepAfterSync();
  }
}

std::vector<at::Tensor> FullyShardedTraining::gatheredCopies(
    const std::vector<at::Tensor>& parameters) {
  std::unordered_map<const void*, at::Tensor> byTensor;
  for (auto* set : sets()) {
    std::vector<at::Tensor> copies = set->fullParameters();  // unit order
    size_t next = 0;
    for (int u = 0; u < set->numUnits(); ++u) {
      for (const NamedTensor& p : set->unit(u).parameters)
        byTensor[p.tensor.unsafeGetTensorImpl()] = copies[next++];
      for (const NamedTensor& p : set->unit(u).frozen)
        byTensor[p.tensor.unsafeGetTensorImpl()] = copies[next++];
    }
  }
  std::vector<at::Tensor> result;
  for (const at::Tensor& p : parameters) result.push_back(byTensor.at(p.unsafeGetTensorImpl()));
  return result;
}

}  // namespace strata::train
