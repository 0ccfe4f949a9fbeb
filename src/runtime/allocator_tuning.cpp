#include "strata/runtime/allocator_tuning.h"

#include <malloc.h>

#include <cstdlib>
#include <string>

namespace strata {

// glibc's largest accepted mmap threshold on 64-bit (DEFAULT_MMAP_THRESHOLD_MAX).
constexpr int kMmapThresholdBytes = 32 << 20;
constexpr int kTrimThresholdBytes = 1 << 30;

bool retainFreedMemory() {
  const char* optOut = std::getenv("STRATA_RETAIN_FREED_MEMORY");
  if (optOut && std::string(optOut) == "0") return false;
  return mallopt(M_MMAP_THRESHOLD, kMmapThresholdBytes) == 1 &&
         mallopt(M_TRIM_THRESHOLD, kTrimThresholdBytes) == 1;
}

}  // namespace strata
