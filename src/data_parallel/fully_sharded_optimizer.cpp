#include "strata/data_parallel/fully_sharded_optimizer.h"

#include <torch/torch.h>

#include <algorithm>

#include "strata/error.h"

namespace strata::data_parallel {

std::vector<FullyShardedOptimizer::Segment> FullyShardedOptimizer::planSegments(
    const FullyShardedDataParallel& fsdp, const ParameterFilter& filter) {
  std::vector<FullyShardedOptimizer::Segment> segments;
  int rank = fsdp.comm().rank();
  for (int u = 0; u < fsdp.numUnits(); ++u) {
    const BucketLayout& layout = fsdp.layout(u);
    if (layout.numParams() == 0) continue;  // frozen parameters alone
    int64_t begin = layout.chunkOffset(0, rank);
    int64_t end = begin + layout.chunkNumel(0);
    for (int i = 0; i < layout.numParams(); ++i) {
      if (filter && !filter(u, i)) continue;
      const ParamSlot& slot = layout.slot(i);
      int64_t from = std::max(begin, slot.offset);
      int64_t to = std::min(end, slot.offset + slot.numel);
      if (from >= to) continue;
      segments.push_back({u, i, from - begin, to - from});
    }
  }
  return segments;
}

FullyShardedOptimizer::FullyShardedOptimizer(FullyShardedDataParallel& fsdp,
                                             std::unique_ptr<FlatOptimizer> optimizer,
                                             const ParameterFilter& filter)
    : fsdp_(fsdp), optimizer_(std::move(optimizer)), segments_(planSegments(fsdp, filter)) {
  if (!optimizer_) throw ConfigError("FullyShardedOptimizer needs an optimizer");
  std::vector<int64_t> numels;
  for (const Segment& s : segments_) numels.push_back(s.numel);
  at::TensorOptions type = fsdp_.shard(0).options();
  for (int u = 0; u < fsdp_.numUnits(); ++u)
    if (fsdp_.layout(u).numParams() > 0) {
      type = fsdp_.shard(u).options();
      break;
    }
  optimizer_->allocate(numels, type);
}

std::vector<FlatStateSlot> FullyShardedOptimizer::stateSlots() const {
  std::vector<FlatStateSlot> slots;
  int rank = fsdp_.comm().rank();
  for (size_t s = 0; s < segments_.size(); ++s) {
    const Segment& segment = segments_[s];
    const BucketLayout& layout = fsdp_.layout(segment.unit);
    const ParamSlot& slot = layout.slot(segment.param);
    slots.push_back({fsdp_.unit(segment.unit).parameters[segment.param].tensor,
                     "." + std::to_string(s), slot.offset,
                     layout.chunkOffset(0, rank) + segment.shardOffset, segment.numel});
  }
  return slots;
}

void FullyShardedOptimizer::step() {
  fsdp_.finishGradientSync();
  stepAfterSync();
}

void FullyShardedOptimizer::stepAfterSync() {
  torch::NoGradGuard noGrad;
  optimizer_->beginStep();
  for (size_t s = 0; s < segments_.size(); ++s) {
    const Segment& segment = segments_[s];
    if (!fsdp_.isUsed(segment.unit, segment.param)) continue;
    at::Tensor param = fsdp_.shard(segment.unit).narrow(0, segment.shardOffset, segment.numel);
    at::Tensor grad =
        fsdp_.gradientShard(segment.unit).narrow(0, segment.shardOffset, segment.numel);
    optimizer_->update(s, param, grad);
  }
}

}  // namespace strata::data_parallel
