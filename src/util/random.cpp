#include "strata/util/random.h"

#include <cstddef>
#include <numeric>
#include <utility>

namespace strata::util {

uint64_t SplitMix64::next() {
  uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

uint64_t SplitMix64::below(uint64_t bound) {
  // Reject the top sliver of [0, 2^64) that is not a whole multiple of bound.
  uint64_t limit = ~uint64_t{0} - (~uint64_t{0} % bound);
  uint64_t value = next();
  while (value >= limit) value = next();
  return value % bound;
}

uint64_t mixSeed(uint64_t seed, uint64_t stream) {
  SplitMix64 mixer(seed ^ (stream * 0xd1342543de82ef95ULL));
  return mixer.next();
}

std::vector<int64_t> permutation(int64_t n, uint64_t seed) {
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), int64_t{0});
  SplitMix64 rng(seed);
  for (int64_t i = n - 1; i > 0; --i) {
    auto j = static_cast<int64_t>(rng.below(static_cast<uint64_t>(i) + 1));
    std::swap(order[static_cast<size_t>(i)], order[static_cast<size_t>(j)]);
  }
  return order;
}

}  // namespace strata::util
