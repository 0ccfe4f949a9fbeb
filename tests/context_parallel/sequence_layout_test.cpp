// The load-balanced layout: every position on exactly one rank, ascending on
// each, and causal attention costing every rank the same.
#include "strata/context_parallel/sequence_layout.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "strata/error.h"

namespace strata::context_parallel {
namespace {

TEST(SequenceLayout, RankRHoldsChunksRAndTwoCpMinusOneMinusR) {
  EXPECT_EQ(localPositions(8, 0, 2), (std::vector<int64_t>{0, 1, 6, 7}));
  EXPECT_EQ(localPositions(8, 1, 2), (std::vector<int64_t>{2, 3, 4, 5}));
  EXPECT_EQ(localPositions(6, 1, 3), (std::vector<int64_t>{1, 4}));
  EXPECT_EQ(concatenatedPositions(4, 2), (std::vector<int64_t>{0, 3, 1, 2}));
}

// Each position once, and each rank's own ascending (its block is then a
// plain lower-triangular mask).
TEST(SequenceLayout, EveryPositionOnceAscendingOnEachRank) {
  for (int cp : {1, 2, 3, 4}) {
    for (int64_t chunk : {1, 3}) {
      int64_t seqLen = 2 * cp * chunk;
      std::vector<int64_t> all = concatenatedPositions(seqLen, cp);
      for (int rank = 0; rank < cp; ++rank) {
        std::vector<int64_t> mine = localPositions(seqLen, rank, cp);
        EXPECT_TRUE(std::is_sorted(mine.begin(), mine.end()));
      }
      std::sort(all.begin(), all.end());
      std::vector<int64_t> expected(static_cast<size_t>(seqLen));
      std::iota(expected.begin(), expected.end(), 0);
      EXPECT_EQ(all, expected) << "cp " << cp;
    }
  }
}

// The point of the order: every rank's queries see as many keys under the
// causal mask (sum over its tokens of position + 1).
TEST(SequenceLayout, CausalAttentionCostsEveryRankTheSame) {
  for (int cp : {2, 3, 4}) {
    std::vector<int64_t> work;
    for (int rank = 0; rank < cp; ++rank) {
      int64_t pairs = 0;
      for (int64_t p : localPositions(8 * cp, rank, cp)) pairs += p + 1;
      work.push_back(pairs);
    }
    EXPECT_EQ(std::count(work.begin(), work.end(), work.front()), cp) << "cp " << cp;
  }
}

TEST(SequenceLayout, RefusesALengthThatIsNotTwoCpChunks) {
  try {
    localPositions(12, 0, 4);
    FAIL() << "seq_len 12 at cp 4 accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("seq_len 12 is not divisible by 2 x cp = 8"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace strata::context_parallel
