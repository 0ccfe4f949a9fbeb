#include "strata/runtime/allocator_tuning.h"

#include <c10/core/CPUAllocator.h>
#include <malloc.h>

#include <cstdlib>
#include <string>

#include "large_block_cache.h"

namespace strata {

// glibc's largest accepted mmap threshold on 64-bit (DEFAULT_MMAP_THRESHOLD_MAX).
constexpr int kMmapThresholdBytes = 32 << 20;
constexpr int kTrimThresholdBytes = 1 << 30;
constexpr size_t kLargeBlockCacheBytes = size_t{2} << 30;

namespace {

// CPU tensors of kMmapThresholdBytes and more from a LargeBlockCache, once
// per process. The cache is never destroyed: tensors may be freed during
// static destruction, after any static object would be gone.
void cacheLargeBlocks() {
  static const bool installed = [] {
    auto* cache = new LargeBlockCache(kMmapThresholdBytes, kLargeBlockCacheBytes);
    c10::SetCPUAllocator(cache);
    return true;
  }();
  (void)installed;
}

}  // namespace

bool retainFreedMemory() {
  const char* optOut = std::getenv("STRATA_RETAIN_FREED_MEMORY");
  if (optOut && std::string(optOut) == "0") return false;
  cacheLargeBlocks();
  return mallopt(M_MMAP_THRESHOLD, kMmapThresholdBytes) == 1 &&
         mallopt(M_TRIM_THRESHOLD, kTrimThresholdBytes) == 1;
}

}  // namespace strata
