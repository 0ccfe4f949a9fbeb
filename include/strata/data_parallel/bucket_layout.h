// How a replica's gradients are packed into buckets of one flat buffer.
//
// Backward produces gradients roughly in reverse registration order (the last
// layer first), so buckets are filled from the last parameter backwards: the
// first bucket is complete early in backward and its all-reduce starts while
// the earlier layers still compute. The first bucket is kept small
// (firstBucketBytes) so communication starts as soon as possible.
//
// Each bucket is padded to a multiple of `shards` elements so it splits into
// `shards` equal contiguous chunks: chunk r of every bucket is what rank r owns
// under ZeRO. Pure arithmetic: nothing blocks; plan() throws ConfigError for
// non-positive sizes or shard counts.
#pragma once

#include <cstdint>
#include <vector>

namespace strata::data_parallel {

struct Bucket {
  int64_t offset = 0;       // first element in the flat buffer
  int64_t numel = 0;        // elements used by parameters
  int64_t paddedNumel = 0;  // numel rounded up to a multiple of the shard count
  std::vector<int> params;  // parameter indices, in the order they were packed
};

struct ParamSlot {
  int bucket = 0;
  int64_t offset = 0;  // first element in the flat buffer
  int64_t numel = 0;
};

struct BucketSizes {
  int64_t firstBucketBytes = int64_t{1} << 20;
  int64_t bucketBytes = int64_t{25} << 20;
};

class BucketLayout {
 public:
  // numels[i] is parameter i's element count; every element is elementBytes.
  static BucketLayout plan(const std::vector<int64_t>& numels, int64_t elementBytes,
                           const BucketSizes& sizes, int shards);

  const std::vector<Bucket>& buckets() const { return buckets_; }
  const ParamSlot& slot(int param) const { return slots_[param]; }
  int numParams() const { return static_cast<int>(slots_.size()); }
  int shards() const { return shards_; }
  // Sum of padded bucket sizes: the flat buffer's length.
  int64_t totalNumel() const { return totalNumel_; }
  // Elements of bucket b that one rank owns: paddedNumel / shards.
  int64_t chunkNumel(int bucket) const;
  // Offset in the flat buffer of rank r's chunk of bucket b.
  int64_t chunkOffset(int bucket, int rank) const;
  // Elements one rank owns over all buckets: totalNumel / shards.
  int64_t shardNumel() const { return totalNumel_ / shards_; }

 private:
  std::vector<Bucket> buckets_;
  std::vector<ParamSlot> slots_;
  int shards_ = 1;
  int64_t totalNumel_ = 0;
};

}  // namespace strata::data_parallel
