// A small deterministic random generator (SplitMix64) for data order and the
// generated corpus. The standard library's engines are portable but its
// distributions are not, so data order would differ between platforms; this
// generator and its helpers give the same numbers everywhere.
#pragma once

#include <cstdint>
#include <vector>

namespace strata::util {

class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}

  uint64_t next();
  // Uniform in [0, bound) by rejection, so no value is favoured; bound >= 1.
  uint64_t below(uint64_t bound);

 private:
  uint64_t state_;
};

// A seed for stream `stream` derived from `seed`, so streams do not overlap.
uint64_t mixSeed(uint64_t seed, uint64_t stream);

// Fisher-Yates permutation of 0..n-1.
std::vector<int64_t> permutation(int64_t n, uint64_t seed);

}  // namespace strata::util
