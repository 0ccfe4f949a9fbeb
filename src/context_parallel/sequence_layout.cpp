#include "strata/context_parallel/sequence_layout.h"

#include <string>

#include "strata/error.h"

namespace strata::context_parallel {

void checkSequenceLength(int64_t seqLen, int cp) {
  if (cp < 1) throw ConfigError("cp must be at least 1, got " + std::to_string(cp));
  if (seqLen < 1 || seqLen % (2 * cp) != 0)
    throw ConfigError("seq_len " + std::to_string(seqLen) +
                      " is not divisible by 2 x cp = " + std::to_string(2 * cp) +
                      ": context parallelism cuts every sequence into 2 x cp equal chunks, two "
                      "per rank, so that causal attention costs every rank alike");
}

std::vector<int64_t> localPositions(int64_t seqLen, int rank, int cp) {
  checkSequenceLength(seqLen, cp);
  int64_t chunk = seqLen / (2 * cp);
  std::vector<int64_t> positions;
  positions.reserve(static_cast<size_t>(2 * chunk));
  for (int64_t index : {int64_t{rank}, int64_t{2 * cp - 1 - rank}})
    for (int64_t i = 0; i < chunk; ++i) positions.push_back(index * chunk + i);
  return positions;
}

std::vector<int64_t> concatenatedPositions(int64_t seqLen, int cp) {
  std::vector<int64_t> all;
  for (int rank = 0; rank < cp; ++rank) {
    std::vector<int64_t> mine = localPositions(seqLen, rank, cp);
    all.insert(all.end(), mine.begin(), mine.end());
  }
  return all;
}

}  // namespace strata::context_parallel
