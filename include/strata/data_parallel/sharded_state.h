// What a checkpoint needs from an optimizer whose state is sharded flat over
// the data-parallel replicas (ZeRO-1/2's ZeroOptimizer, ZeRO-3's
// FullyShardedOptimizer): the state itself, and where in it each parameter's
// elements lie, so the state can be indexed by parameter and loaded into
// another layout. Nothing blocks or communicates.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>
#include <vector>

#include "strata/data_parallel/replica_sync.h"

namespace strata::data_parallel {

// Elements of `parameter` held in the state tensors named kind + `suffix`
// ("exp_avg.3"): with the parameter's elements numbered flat from
// `slotOffset` on, the state tensor holds elements [chunkOffset, chunkOffset
// + chunkNumel) of that numbering, some of which may be the parameter's.
struct FlatStateSlot {
  at::Tensor parameter;
  std::string suffix;
  int64_t slotOffset = 0;
  int64_t chunkOffset = 0;
  int64_t chunkNumel = 0;
};

class ShardedOptimizerState {
 public:
  virtual ~ShardedOptimizerState() = default;
  // This rank's state by name; the tensors alias the live state.
  virtual std::vector<NamedTensor> saveState() const = 0;
  // ConfigError names an entry that is missing or has another shape.
  virtual void loadState(const std::vector<NamedTensor>& saved) = 0;
  // Where this rank's state tensors cover its parameters.
  virtual std::vector<FlatStateSlot> stateSlots() const = 0;
};

}  // namespace strata::data_parallel
