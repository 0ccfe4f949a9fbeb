// Expert parallelism (ep): the experts of every MoE MLP spread over an ep
// group carved out of the data-parallel ranks (dp x cp), tokens sent to the
// rank holding their expert by all-to-all and brought back the same way.
//
// An ExpertParallel is what a model's MoE layers share with whoever trains
// the model, given to them at build time (no global state):
//   - the ep group (nullptr or size 1: every expert on every rank) and the
//     cp group the sequence-wise balance loss sums over (nullptr without cp);
//   - the loss scale: the weight the trainer gives one micro-batch's loss
//     (1 / micro-batches), applied to the routing losses' gradients, which
//     enter backward at each MoE layer rather than through the loss;
//   - the statistics of the passes that recorded gradients since the last
//     takeStats(): tokens each expert of each MoE layer was sent by this
//     rank, assignments dropped at capacity, and the routing losses.
//
// Expert e of E lives on ep rank e / (E / ep). Non-expert parameters stay
// replicated over dp x cp; an expert's parameters are replicated over the
// dp x cp ranks holding it (dp x cp / ep of them), whose gradients are
// summed contributions of the whole ep group's tokens.
//
// Not thread-safe: one training loop uses it. Nothing here blocks.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "strata/runtime/communicator.h"

namespace strata::expert_parallel {

// One MoE layer's statistics over the recorded passes.
struct MoeLayerStats {
  at::Tensor tokensPerExpert;  // [E] int64: assignments this rank sent each expert
  int64_t dropped = 0;         // assignments dropped at capacity on this rank
  double auxLoss = 0;          // sum over passes of the unscaled aux term
  double zLoss = 0;            // sum over passes of the unscaled z term
  int64_t passes = 0;
};

// Whether a model's parameter `name` belongs to one routed expert
// ("block1.mlp.experts.3.up.weight"): held by one ep rank, not replicated.
bool isExpertParameter(const std::string& name);

class ExpertParallel {
 public:
  ExpertParallel(std::shared_ptr<Communicator> ep, std::shared_ptr<Communicator> sequence)
      : ep_(std::move(ep)), sequence_(std::move(sequence)) {}

  Communicator* ep() const { return ep_ && ep_->size() > 1 ? ep_.get() : nullptr; }
  int size() const { return ep_ ? ep_->size() : 1; }
  int rank() const { return ep_ ? ep_->rank() : 0; }
  Communicator* sequence() const { return sequence_.get(); }

  double lossScale() const { return lossScale_; }
  void setLossScale(double scale) { lossScale_ = scale; }

  // Adds one pass of MoE layer `block` (its block index in the model).
  void record(int64_t block, const at::Tensor& tokensPerExpert, int64_t dropped, double auxLoss,
              double zLoss);
  // The statistics by block index since the last call; clears them.
  std::map<int64_t, MoeLayerStats> takeStats();
  // Wall time this rank spent in the ep all-to-alls of dispatch and combine
  // (forward and backward, counts included) since the last call; clears it.
  void addExchangeSeconds(double seconds) { exchangeSeconds_ += seconds; }
  double takeExchangeSeconds();

 private:
  std::shared_ptr<Communicator> ep_;
  std::shared_ptr<Communicator> sequence_;
  double lossScale_ = 1.0;
  std::map<int64_t, MoeLayerStats> stats_;
  double exchangeSeconds_ = 0;
};

}  // namespace strata::expert_parallel
