// ZeRO-3 in the trainer: this rank's layers as fully sharded units over the
// dp group (fully_sharded.h), each tensor-parallel shard sharded again over
// dp. One unit per layer of this rank's pipeline stages; a weight tied
// between the embedding and the head is a unit of its own, gathered around
// both layers, so the first and the last stage shard it alike and their
// gradient shards can be summed over the tied group. AdamW in two groups as
// makeAdamW sets it up (optimizer.h): matrices decay, vectors do not.
//
// Under expert parallelism the routed experts' parameters of a layer form a
// unit of their own, sharded over the experts' replicas (moe_training.h)
// instead of dp: a second set of units, gathered with the layer's others.
//
// The layers arrive as shells (models::HeldAs::kShells): each unit is
// given its values from `buildLayer` just before it is sharded, one layer at
// a time, so no rank holds the whole model. The tied weight is the
// embedding's (named "embedding.tokens.weight"), so its unit is filled from
// layer 0 on every stage that holds it.
//
// Construction is a collective over dp (and the expert replicas); forwardLayer
// blocks in gathers and backward in reductions, each bounded by the
// communicator's timeout. The methods below that act on "every set" act on
// both sets alike (FullyShardedDataParallel's of the same names).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <vector>

#include "strata/config/config.h"
#include "strata/data_parallel/fully_sharded.h"
#include "strata/data_parallel/fully_sharded_optimizer.h"
#include "strata/pipeline/stage.h"
#include "strata/train/grad_norm.h"

namespace strata::train {

// Model layer `layer` built afresh, alone, with its initial values.
using LayerBuilder = std::function<std::shared_ptr<torch::nn::Module>(int layer)>;

class FullyShardedTraining {
 public:
  // `named`: this rank's parameters, each once, named as in the model
  // ("<layer>.<path>"), frozen ones (requires_grad false: a base under LoRA)
  // included, which are sharded and gathered but not trained; `tiedWeight`,
  // trained or frozen, may be undefined.
  FullyShardedTraining(const std::vector<pipeline::Stage>& stages,
                       const std::vector<data_parallel::NamedTensor>& named,
                       const at::Tensor& tiedWeight, const OptimConfig& config,
                       bool reshardAfterForward, const LayerBuilder& buildLayer, Communicator& dp,
                       Communicator* expertReplicas = nullptr);

  // Runs model layer `layer`'s forward with its units gathered (a
  // pipeline::LayerCall).
  at::Tensor forwardLayer(int layer, const at::Tensor& input, const pipeline::LayerBody& run);
  // What clipping measures: every unit's gradient shard, cut into the runs
  // whose parameters count on this rank and those counted on another
  // (grad_norm.h's shardedNormTerm).
  GradientTerms gradientTerms(const std::vector<NormTerm>& normTerms) const;
  // The tied weight's gradient shard (undefined without a trained tied weight).
  at::Tensor tiedGradient() const;
  // The optimizer step on this rank's shards, at learning rate `lr`.
  void step(double lr);
  // Collective over dp: copies of `parameters` (each one of the units'),
  // gathered whole, in the given order.
  std::vector<at::Tensor> gatheredCopies(const std::vector<at::Tensor>& parameters);
  // Every set: waits for the gradient reductions / turns them on or off /
  // zeroes the gradients / releases the gathered parameters / gathers every
  // unit / keeps the parameters written while gathered.
  void finishGradientSync();
  void setRequireSync(bool on);
  void zeroGrad();
  void reshard();
  void gatherAll();
  void commitParameters();
  const std::vector<std::unique_ptr<data_parallel::FullyShardedOptimizer>>& optimizers() const {
    return optimizers_;
  }

 private:
  // The sets of units: dp's, then the experts' when there are any.
  std::vector<data_parallel::FullyShardedDataParallel*> sets() const;
  void addOptimizers(data_parallel::FullyShardedDataParallel& set, const OptimConfig& config);

  std::unique_ptr<data_parallel::FullyShardedDataParallel> fsdp_;
  std::unique_ptr<data_parallel::FullyShardedDataParallel> experts_;  // nullptr without ep
  std::vector<std::unique_ptr<data_parallel::FullyShardedOptimizer>> optimizers_;
  std::map<int, std::vector<int>> layerUnits_;        // model layer -> its units, tied first
  std::map<int, std::vector<int>> layerExpertUnits_;  // model layer -> its expert unit
  int tiedUnit_ = -1;
};

}  // namespace strata::train
