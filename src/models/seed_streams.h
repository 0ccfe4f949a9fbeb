// Seed sub-streams of the model families: every layer draws from its own, so
// adding a layer never changes the weights of the others.
#pragma once

#include <cstdint>

namespace strata::models {

enum SeedStream : uint64_t {
  kTokens = 1,
  kPositions = 2,
  kEmbeddingDropout = 3,
  kHead = 4,
  kLoraDropout = 5  // the adapters' input dropout, a stream a block
};
inline uint64_t blockStream(int64_t index) { return 100 + static_cast<uint64_t>(index); }

}  // namespace strata::models
