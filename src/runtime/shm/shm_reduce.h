// The element-wise reduction of the shared-memory transport: how members
// split the work, and the loops that do it.
//
// Members see each other's data as `regions`: regions[j] is member j's copy
// (a tensor over shared memory), indexed by group rank. Callers order the
// calls with their peers (barriers, or the protocol of shm_claimed_reduce.h):
// every region is written before a call reads it, and nobody reuses a region
// that a peer still reads. The calls themselves never block.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "strata/runtime/communicator.h"

namespace strata {

// out = reduce_j parts[j], element-wise in j order (kAvg divides the sum by
// parts.size()). All contiguous, of out's dtype and size; out may be parts[0].
void reduceInto(at::Tensor& out, const std::vector<at::Tensor>& parts, ReduceOp op);

// [lo, hi) of `length` elements that member `rank` of `n` reduces.
std::pair<int64_t, int64_t> shareOf(int64_t length, int rank, int n);

// Elements [start, start + length) of every region = their reduction over
// the regions, in region order.
void reduceRangeIntoAll(const std::vector<at::Tensor>& regions, int64_t start, int64_t length,
                        ReduceOp op);

// Reduce-scatter from regions holding [n * k] elements each:
//   out = reduce_j regions[j][rank * k : (rank + 1) * k],  k = out.numel().
void reduceScatterFromRegions(at::Tensor& out, const std::vector<at::Tensor>& regions, int rank,
                              ReduceOp op);

}  // namespace strata
