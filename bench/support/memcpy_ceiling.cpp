#include "memcpy_ceiling.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <vector>

namespace strata::bench {

double memcpyGbps() {
  using Clock = std::chrono::steady_clock;
  const size_t bytes = size_t{64} << 20;
  std::vector<char> from(bytes, 1), to(bytes, 0);
  double best = 1e9;
  for (int i = 0; i < 10; ++i) {
    auto start = Clock::now();
    std::memcpy(to.data(), from.data(), bytes);
    best = std::min(best, std::chrono::duration<double>(Clock::now() - start).count());
    from[i] = to[bytes - 1 - i];  // keep the copies observable
  }
  return static_cast<double>(bytes) / best / 1e9;
}

}  // namespace strata::bench
