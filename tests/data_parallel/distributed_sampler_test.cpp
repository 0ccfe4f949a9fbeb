#include "strata/data_parallel/distributed_sampler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "strata/error.h"

namespace strata::data_parallel {
namespace {

// How many times each index is read by all replicas together in one epoch.
std::map<int64_t, int> readCounts(int64_t size, int replicas, SamplerOptions options,
                                  uint64_t epoch) {
  std::map<int64_t, int> counts;
  for (int rank = 0; rank < replicas; ++rank) {
    DistributedSampler sampler(size, replicas, rank, options);
    std::vector<int64_t> mine = sampler.indices(epoch);
    EXPECT_EQ(static_cast<int64_t>(mine.size()), sampler.samplesPerReplica());
    for (int64_t index : mine) ++counts[index];
  }
  return counts;
}

TEST(DistributedSampler, DisjointAndCoveringWhenReplicasDivideTheData) {
  for (int replicas : {1, 2, 3, 4}) {
    auto counts = readCounts(12, replicas, {}, 0);
    ASSERT_EQ(counts.size(), 12u) << replicas;
    for (auto [index, count] : counts) EXPECT_EQ(count, 1) << "index " << index;
  }
}

TEST(DistributedSampler, PadByWrappingReadsEveryIndexAndRepeatsOnlyTheShortfall) {
  auto counts = readCounts(10, 4, {}, 3);  // 3 each = 12 reads of 10 indices
  ASSERT_EQ(counts.size(), 10u);
  int repeated = 0;
  for (auto [index, count] : counts) {
    EXPECT_LE(count, 2);
    repeated += count - 1;
  }
  EXPECT_EQ(repeated, 2);
}

TEST(DistributedSampler, DropLastReadsDisjointIndicesAndSkipsTheRemainder) {
  SamplerOptions options;
  options.remainder = Remainder::kDropLast;
  auto counts = readCounts(10, 4, options, 3);  // 2 each = 8 distinct indices
  EXPECT_EQ(counts.size(), 8u);
  for (auto [index, count] : counts) EXPECT_EQ(count, 1);
}

TEST(DistributedSampler, ShuffleIsDeterministicAndChangesWithEpochAndSeed) {
  DistributedSampler a(100, 2, 1, {});
  DistributedSampler b(100, 2, 1, {});
  EXPECT_EQ(a.indices(5), b.indices(5));
  EXPECT_NE(a.indices(5), a.indices(6));
  SamplerOptions otherSeed;
  otherSeed.seed = 42;
  EXPECT_NE(a.indices(5), DistributedSampler(100, 2, 1, otherSeed).indices(5));
  std::vector<int64_t> sorted = a.indices(5);
  std::sort(sorted.begin(), sorted.end());
  EXPECT_NE(sorted, a.indices(5)) << "shuffled";
}

TEST(DistributedSampler, WithoutShuffleReplicasReadStrided) {
  SamplerOptions options;
  options.shuffle = false;
  EXPECT_EQ(DistributedSampler(7, 3, 1, options).indices(9), (std::vector<int64_t>{1, 4, 0}));
}

TEST(DistributedSampler, RejectsBadArguments) {
  EXPECT_THROW(DistributedSampler(10, 0, 0), ConfigError);
  EXPECT_THROW(DistributedSampler(10, 2, 2), ConfigError);
  EXPECT_THROW(DistributedSampler(10, 2, -1), ConfigError);
  EXPECT_THROW(DistributedSampler(-1, 2, 0), ConfigError);
  EXPECT_THROW(DistributedSampler(0, 2, 0), ConfigError);
  SamplerOptions dropLast;
  dropLast.remainder = Remainder::kDropLast;
  EXPECT_TRUE(DistributedSampler(0, 2, 0, dropLast).indices(0).empty());
}

}  // namespace
}  // namespace strata::data_parallel
