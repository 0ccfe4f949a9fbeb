// Where a rank's tensor sits in the global tensor: the arithmetic shared by
// saving the tensor index and loading through it. A tp shard of a parameter
// split along dim d holds, from tp rank r, the block at r x (its size along
// d); the global shape clips it, so a padded vocabulary's rows drop out.
// Pure arithmetic: nothing blocks or throws.
#pragma once

#include <cstdint>
#include <vector>

#include "strata/checkpoint/checkpoint.h"

namespace strata::train {

struct ShardBox {
  std::vector<int64_t> offset, length;  // in the global tensor
  bool empty() const;
};

// The valid part of this rank's shard of `p`.
ShardBox shardBox(const IndexedParameter& p, int tpRank);

// A block of a flat run, as ZeRO stores optimizer state.
struct FlatRun {
  ShardBox box;                // where its valid part sits in the global tensor
  std::vector<int64_t> block;  // its shape in the rank's tensor (box.length clipped from it)
  int64_t flatOffset = 0;      // its first element, counted from the chunk's first
};

// The elements of `p`'s rank tensor, packed at flat [slotOffset, slotOffset +
// numel), that fall into the chunk [chunkOffset, chunkOffset + chunkNumel),
// cut into blocks (splitRun) and placed in the global tensor.
std::vector<FlatRun> flatRuns(const IndexedParameter& p, int tpRank, int64_t slotOffset,
                              int64_t chunkOffset, int64_t chunkNumel);

}  // namespace strata::train
