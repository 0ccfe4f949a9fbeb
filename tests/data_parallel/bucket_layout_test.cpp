#include "strata/data_parallel/bucket_layout.h"

#include <gtest/gtest.h>

#include "strata/error.h"
#include "strata/plan/cost_model.h"

namespace strata::data_parallel {
namespace {

// The planner prices the gradient sync one message per bucket of these sizes.
TEST(BucketLayout, ThePlannerKnowsTheDefaultSizes) {
  EXPECT_EQ(plan::GradientBuckets{}.firstBytes, double(BucketSizes{}.firstBucketBytes));
  EXPECT_EQ(plan::GradientBuckets{}.bytes, double(BucketSizes{}.bucketBytes));
}

TEST(BucketLayout, FillsFromTheLastParameterWithASmallFirstBucket) {
  // 4-byte elements; first bucket closes at 40 bytes, later ones at 100.
  BucketLayout layout = BucketLayout::plan({10, 20, 5, 4}, 4, {40, 100}, 1);
  ASSERT_EQ(layout.buckets().size(), 2u);
  EXPECT_EQ(layout.buckets()[0].params, (std::vector<int>{3, 2, 1}));  // 16 + 20 + 80 bytes
  EXPECT_EQ(layout.buckets()[1].params, (std::vector<int>{0}));
  EXPECT_EQ(layout.slot(3).offset, 0);
  EXPECT_EQ(layout.slot(2).offset, 4);
  EXPECT_EQ(layout.slot(1).offset, 9);
  EXPECT_EQ(layout.slot(0).offset, 29);
  EXPECT_EQ(layout.slot(0).bucket, 1);
  EXPECT_EQ(layout.totalNumel(), 39);
}

TEST(BucketLayout, PadsEveryBucketToEqualChunksPerShard) {
  BucketLayout layout = BucketLayout::plan({3, 5, 7}, 4, {1, 1}, 4);
  ASSERT_EQ(layout.buckets().size(), 3u);
  EXPECT_EQ(layout.buckets()[0].numel, 7);
  EXPECT_EQ(layout.buckets()[0].paddedNumel, 8);
  EXPECT_EQ(layout.buckets()[1].offset, 8);
  EXPECT_EQ(layout.buckets()[1].paddedNumel, 8);
  EXPECT_EQ(layout.buckets()[2].paddedNumel, 4);
  EXPECT_EQ(layout.totalNumel(), 20);
  EXPECT_EQ(layout.shardNumel(), 5);
  EXPECT_EQ(layout.chunkNumel(0), 2);
  EXPECT_EQ(layout.chunkOffset(0, 3), 6);
  EXPECT_EQ(layout.chunkOffset(1, 1), 10);
}

TEST(BucketLayout, OneBigBucketHoldsEverything) {
  BucketLayout layout = BucketLayout::plan({100, 200, 300}, 4, {}, 2);
  ASSERT_EQ(layout.buckets().size(), 1u);
  EXPECT_EQ(layout.buckets()[0].params, (std::vector<int>{2, 1, 0}));
}

TEST(BucketLayout, RejectsBadSizes) {
  EXPECT_THROW(BucketLayout::plan({1}, 4, {0, 10}, 1), ConfigError);
  EXPECT_THROW(BucketLayout::plan({1}, 4, {10, -1}, 1), ConfigError);
  EXPECT_THROW(BucketLayout::plan({1}, 4, {}, 0), ConfigError);
  EXPECT_THROW(BucketLayout::plan({1, 0}, 4, {}, 1), ConfigError);
}

}  // namespace
}  // namespace strata::data_parallel
