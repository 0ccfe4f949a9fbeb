#include "large_block_cache.h"

#include <c10/core/CPUAllocator.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <torch/torch.h>

#include <cstdlib>
#include <cstring>

#include "strata/runtime/allocator_tuning.h"

namespace strata {
namespace {

constexpr size_t kMiB = size_t{1} << 20;

TEST(LargeBlockCache, AFreedBlockServesTheNextOfItsSize) {
  LargeBlockCache cache(32 * kMiB, 1024 * kMiB);
  void* first = nullptr;
  {
    c10::DataPtr block = cache.allocate(40 * kMiB);
    first = block.get();
    std::memset(first, 1, 40 * kMiB);
  }
  EXPECT_EQ(cache.cachedBytes(), 40 * kMiB);
  {
    c10::DataPtr same = cache.allocate(40 * kMiB - 100);  // rounded up to 2 MiB alike
    EXPECT_EQ(same.get(), first);
    EXPECT_EQ(cache.cachedBytes(), 0u);
    c10::DataPtr other = cache.allocate(50 * kMiB);
    EXPECT_NE(other.get(), first);
  }
  EXPECT_EQ(cache.cachedBytes(), 90 * kMiB);
  c10::DataPtr small = cache.allocate(kMiB);  // below the smallest: the default allocator's
  small.clear();
  EXPECT_EQ(cache.cachedBytes(), 90 * kMiB);
}

// LibTorch's raw_allocate keeps only the data pointer; raw_deallocate must
// still return a large block to its cache and a small one to the default
// allocator.
TEST(LargeBlockCache, RawBlocksGoBackWhereTheyCameFrom) {
  LargeBlockCache cache(32 * kMiB, 1024 * kMiB);
  void* large = cache.raw_allocate(40 * kMiB);
  void* small = cache.raw_allocate(kMiB);
  cache.raw_deallocate(small);
  EXPECT_EQ(cache.cachedBytes(), 0u);
  cache.raw_deallocate(large);
  EXPECT_EQ(cache.cachedBytes(), 40 * kMiB);
}

// Past the limit, the blocks freed longest ago are unmapped.
TEST(LargeBlockCache, KeepsNoMoreThanItsLimit) {
  LargeBlockCache cache(32 * kMiB, 100 * kMiB);
  c10::DataPtr a = cache.allocate(40 * kMiB);
  c10::DataPtr b = cache.allocate(36 * kMiB);
  c10::DataPtr c = cache.allocate(34 * kMiB);
  void* newest = c.get();
  a.clear();
  b.clear();
  EXPECT_EQ(cache.cachedBytes(), 76 * kMiB);
  c.clear();  // 110 MiB: a goes
  EXPECT_EQ(cache.cachedBytes(), 70 * kMiB);
  EXPECT_EQ(cache.allocate(34 * kMiB).get(), newest);
}

long minorFaults() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}

// A 64 MiB tensor (a weight's gradient, a micro-batch's logits), written and
// freed: 16384 fresh pages each time if glibc maps it afresh.
void allocateAndTouch() {
  at::Tensor block = at::empty({16 << 20}, at::kFloat);
  block.fill_(1);
}

// Installed by retainFreedMemory (World::init calls it), LibTorch's CPU
// tensors of 64 MiB reuse the pages of the last one freed.
TEST(LargeBlockCache, RetainingFreedMemoryReusesLargeTensorsWithoutFaults) {
  ASSERT_TRUE(retainFreedMemory());
  allocateAndTouch();
  long before = minorFaults();
  allocateAndTouch();
  EXPECT_LT(minorFaults() - before, 1000);
}

}  // namespace
}  // namespace strata
