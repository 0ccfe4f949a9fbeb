#include "strata/data_parallel/bucket_layout.h"

#include <string>

#include "strata/error.h"

namespace strata::data_parallel {
namespace {

void checkSizes(const std::vector<int64_t>& numels, int64_t elementBytes, const BucketSizes& sizes,
                int shards) {
  if (sizes.bucketBytes <= 0 || sizes.firstBucketBytes <= 0) {
    throw ConfigError("bucket sizes must be positive, got bucketBytes " +
                      std::to_string(sizes.bucketBytes) + " and firstBucketBytes " +
                      std::to_string(sizes.firstBucketBytes));
  }
  if (elementBytes <= 0 || shards <= 0) {
    throw ConfigError("bucket layout needs positive element size and shard count, got " +
                      std::to_string(elementBytes) + " bytes and " + std::to_string(shards) +
                      " shards");
  }
  for (size_t i = 0; i < numels.size(); ++i) {
    if (numels[i] <= 0) {
      throw ConfigError("parameter #" + std::to_string(i) + " has " + std::to_string(numels[i]) +
                        " elements; data parallelism needs non-empty parameters");
    }
  }
}

int64_t roundUp(int64_t value, int64_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

}  // namespace

BucketLayout BucketLayout::plan(const std::vector<int64_t>& numels, int64_t elementBytes,
                                const BucketSizes& sizes, int shards) {
  checkSizes(numels, elementBytes, sizes, shards);
  BucketLayout layout;
  layout.shards_ = shards;
  layout.slots_.resize(numels.size());
  Bucket open;
  auto close = [&]() {
    open.paddedNumel = roundUp(open.numel, shards);
    layout.totalNumel_ += open.paddedNumel;
    layout.buckets_.push_back(open);
    open = Bucket{};
    open.offset = layout.totalNumel_;
  };
  // Last parameter first: the order backward produces gradients.
  for (int i = static_cast<int>(numels.size()) - 1; i >= 0; --i) {
    int bucket = static_cast<int>(layout.buckets_.size());
    layout.slots_[i] = ParamSlot{bucket, open.offset + open.numel, numels[i]};
    open.params.push_back(i);
    open.numel += numels[i];
    int64_t cap = bucket == 0 ? sizes.firstBucketBytes : sizes.bucketBytes;
    if (open.numel * elementBytes >= cap) close();
  }
  if (!open.params.empty()) close();
  return layout;
}

int64_t BucketLayout::chunkNumel(int bucket) const {
  return buckets_[bucket].paddedNumel / shards_;
}

int64_t BucketLayout::chunkOffset(int bucket, int rank) const {
  return buckets_[bucket].offset + rank * chunkNumel(bucket);
}

}  // namespace strata::data_parallel
