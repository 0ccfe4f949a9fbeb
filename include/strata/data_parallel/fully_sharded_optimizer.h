// The optimizer step of fully sharded data parallelism (ZeRO-3): each rank
// updates only its shards, with its shards of the averaged gradient, and the
// next forward's gathers hand every rank the updated parameters.
//
// A segment is one parameter's piece of one unit's shard, so a parameter that
// no rank used in the step (FullyShardedDataParallel::isUsed) is left as it
// is, state and all, as LibTorch's optimizers skip a parameter without
// gradient.
//
// step() is a collective (finishGradientSync(), bounded by the communicator's
// timeout); the update itself does not communicate. Nothing is gathered here.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "strata/data_parallel/flat_optimizer.h"
#include "strata/data_parallel/fully_sharded.h"
#include "strata/data_parallel/sharded_state.h"

namespace strata::data_parallel {

class FullyShardedOptimizer : public ShardedOptimizerState {
 public:
  // Which parameters an optimizer steps: (unit, parameter within the unit).
  using ParameterFilter = std::function<bool(int unit, int param)>;
  // `fsdp` must outlive this object. With a filter, only the parameters it
  // selects (so several optimizers, weight decay on some groups only, can
  // share one replica set).
  FullyShardedOptimizer(FullyShardedDataParallel& fsdp, std::unique_ptr<FlatOptimizer> optimizer,
                        const ParameterFilter& filter = {});

  void step();
  // The update half of step(), for callers that finished the gradient sync
  // themselves (to clip the gradient norm in between, say).
  void stepAfterSync();
  void setLearningRate(double lr) { optimizer_->setLearningRate(lr); }
  void zeroGrad() { fsdp_.zeroGrad(); }
  // Optimizer state held by this rank.
  int64_t stateBytes() const { return optimizer_->stateBytes(); }
  // This rank's state, for checkpoints; see FlatOptimizer.
  std::vector<NamedTensor> saveState() const override { return optimizer_->saveState(); }
  void loadState(const std::vector<NamedTensor>& saved) override { optimizer_->loadState(saved); }
  // Segment s's state (suffix ".s") holds one piece of one parameter.
  std::vector<FlatStateSlot> stateSlots() const override;

 private:
  // Where segment s lies: unit, parameter within the unit, first element
  // within the rank's shard, and its length.
  struct Segment {
    int unit = 0;
    int param = 0;
    int64_t shardOffset = 0;
    int64_t numel = 0;
  };
  // This rank's pieces of every parameter the filter selects (all without
  // one), unit by unit (pure arithmetic).
  static std::vector<Segment> planSegments(const FullyShardedDataParallel& fsdp,
                                           const ParameterFilter& filter);

  FullyShardedDataParallel& fsdp_;
  std::unique_ptr<FlatOptimizer> optimizer_;
  std::vector<Segment> segments_;
};

}  // namespace strata::data_parallel
