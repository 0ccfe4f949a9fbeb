// The element-wise reduction of the shared-memory transport: how members
// split the work, and the in-place algorithms over collective buffers.
//
// Members see each other's data as `regions`: regions[j] is member j's copy
// (a tensor over shared memory), indexed by group rank. Callers put a barrier
// before (every region is written) and after (nobody reuses a region that a
// peer still reads) each call; the calls themselves never block.
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

// Every part = reduce_j parts[j], as above.
void reduceIntoAll(const std::vector<at::Tensor>& parts, ReduceOp op);

// [lo, hi) of `length` elements that member `rank` of `n` reduces.
std::pair<int64_t, int64_t> shareOf(int64_t length, int rank, int n);

// All-reduce in place: member `rank` reduces its share of every region, in
// group-rank order (so the result does not depend on who computes it), and
// writes the result into every region. Memory traffic per member is one read
// and one write of the tensor, against three of each for staged copies.
void allReduceShareInPlace(const std::vector<at::Tensor>& regions, int rank, ReduceOp op);

// Reduce-scatter from regions holding [n * k] elements each:
//   out = reduce_j regions[j][rank * k : (rank + 1) * k],  k = out.numel().
void reduceScatterFromRegions(at::Tensor& out, const std::vector<at::Tensor>& regions, int rank,
                              ReduceOp op);

}  // namespace strata
