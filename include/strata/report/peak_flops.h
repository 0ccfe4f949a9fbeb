// This machine's peak FLOP/s, the denominator of MFU, measured once and
// cached.
//
// The peak is the best of `repeats` fp32 matrix products of size^3 (2 size^3
// FLOPs each) on `threads` intra-op threads: what the BLAS reaches on a
// large, well-shaped product, which no training step beats. It is cached in
// a TOML file (default: $XDG_CACHE_HOME or ~/.cache, then
// strata/peak-flops.toml) under the CPU model name and thread count, so each
// machine is measured once, not on every run. Measure on a quiet machine:
// a busy one caches a low peak (and so a flattering MFU); delete the file to
// measure again.
//
// measureMatmulFlops blocks for the measurement (about a second at 1024 on
// one thread). cachedPeakFlops never throws for the cache: an absent or
// unreadable cache is measured afresh; a corrupt one is too, and an
// unwritable one left alone, each of these two with a warning through
// strata/util/log.h.
#pragma once

#include <functional>
#include <string>

namespace strata::train {

struct PeakFlopsOptions {
  std::string cachePath;  // empty: defaultPeakFlopsCachePath()
  int threads = 1;
  int size = 1024;
  int repeats = 5;
};

// "model name" from /proc/cpuinfo, or "unknown-cpu".
std::string cpuModelName();
std::string defaultPeakFlopsCachePath();
double measureMatmulFlops(int size, int repeats, int threads);

// The cached value for (cpuModelName(), options.threads), else `measure()`
// (default: measureMatmulFlops with the options), stored in the cache.
double cachedPeakFlops(const PeakFlopsOptions& options,
                       const std::function<double()>& measure = nullptr);

}  // namespace strata::train
