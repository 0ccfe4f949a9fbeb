// ZeRO: optimizer state sharded over the data-parallel replicas.
//
// Ownership follows the bucket layout: rank r owns chunk r of every bucket of
// the flattened parameters (bucket_layout.h), so it holds optimizer state for
// about 1/R of the elements, and under ZeRO-2 each bucket's reduce-scatter can
// start during backward like an all-reduce would.
//
// The stage follows the DataParallel's reduction: GradientReduction::kAllReduce
// gives ZeRO-1 (full averaged gradients, sharded state), kReduceScatter gives
// ZeRO-2 (each rank receives only its averaged gradient chunks).
//
// step() is a collective: it finishes the gradient sync, updates this rank's
// chunks, then all-gathers the updated parameters into every replica. Each
// wait is bounded by the communicator's timeout (TimeoutError / PeerError).
// Every parameter takes part in every step (one with no gradient counts as
// zero gradient).
#pragma once

#include <memory>

#include "strata/data_parallel/data_parallel.h"
#include "strata/data_parallel/flat_optimizer.h"
#include "strata/data_parallel/sharded_state.h"

namespace strata::data_parallel {

class ZeroOptimizer : public ShardedOptimizerState {
 public:
  // `dp` must outlive this object.
  ZeroOptimizer(DataParallel& dp, std::unique_ptr<FlatOptimizer> optimizer);

  void step();
  // The update half of step(), for callers that finished the gradient sync
  // themselves (to clip the global gradient norm in between, say).
  void stepAfterSync();
  // The learning rate of the next step.
  void setLearningRate(double lr) { optimizer_->setLearningRate(lr); }
  // Zeroes the gradients (dp.zeroGrad()).
  void zeroGrad();
  // 1 or 2.
  int stage() const;
  // Optimizer state held by this rank.
  int64_t stateBytes() const { return optimizer_->stateBytes(); }
  // This rank's shard of the optimizer state, for checkpoints (the
  // parameters themselves are the model's); see FlatOptimizer.
  std::vector<NamedTensor> saveState() const override { return optimizer_->saveState(); }
  void loadState(const std::vector<NamedTensor>& saved) override { optimizer_->loadState(saved); }
  // Parameter j's state lies in the state of its bucket b (suffix ".b").
  std::vector<FlatStateSlot> stateSlots() const override;
  // The replica set whose flat buckets the state follows: which parameter
  // sits where, and this rank's chunk of each bucket (checkpoint resharding).
  const DataParallel& replicas() const { return dp_; }

 private:
  void gatherParameters();
  void scatterParameters();

  DataParallel& dp_;
  std::unique_ptr<FlatOptimizer> optimizer_;
  at::Tensor flatParams_;  // [layout.totalNumel()], same layout as the gradients
};

}  // namespace strata::data_parallel
