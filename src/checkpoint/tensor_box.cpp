#include "checkpoint/tensor_box.h"

#include <algorithm>

namespace strata::train {
namespace {

// Moves a block of the rank tensor into global coordinates and clips it.
ShardBox place(const IndexedParameter& p, int tpRank, const std::vector<int64_t>& offset,
               const std::vector<int64_t>& shape) {
  ShardBox box{offset, shape};
  for (size_t d = 0; d < shape.size(); ++d) {
    if (static_cast<int64_t>(d) == p.shardDim) box.offset[d] += tpRank * p.tensor.size(p.shardDim);
    box.length[d] = std::max<int64_t>(0, std::min(shape[d], p.globalShape[d] - box.offset[d]));
  }
  return box;
}

}  // namespace

bool ShardBox::empty() const {
  return std::any_of(length.begin(), length.end(), [](int64_t n) { return n <= 0; });
}

ShardBox shardBox(const IndexedParameter& p, int tpRank) {
  std::vector<int64_t> shape = p.tensor.sizes().vec();
  return place(p, tpRank, std::vector<int64_t>(shape.size(), 0), shape);
}

std::vector<FlatRun> flatRuns(const IndexedParameter& p, int tpRank, int64_t slotOffset,
                              int64_t chunkOffset, int64_t chunkNumel) {
  int64_t begin = std::max(slotOffset, chunkOffset);
  int64_t end = std::min(slotOffset + p.tensor.numel(), chunkOffset + chunkNumel);
  std::vector<FlatRun> runs;
  for (const RunBlock& b : splitRun(p.tensor.sizes().vec(), begin - slotOffset, end - slotOffset)) {
    FlatRun run{place(p, tpRank, b.offset, b.shape), b.shape, slotOffset + b.start - chunkOffset};
    if (!run.box.empty()) runs.push_back(std::move(run));
  }
  return runs;
}

}  // namespace strata::train
