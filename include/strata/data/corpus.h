// The embedded default corpus: English-like text generated in code from a
// seed, so training needs no download and every run sees the same bytes.
//
// It has structure a small GPT can learn within a few hundred steps, well
// below the byte-unigram entropy (about 4.2 bits per byte):
//  - sentences from a small grammar with subject-verb agreement
//    ("the old dog sleeps near the river." / "the old dogs sleep ..."),
//  - fixed facts about recurring people ("mara lives in lisbon." is always
//    the same city for mara),
//  - arithmetic facts ("17 + 25 = 42.", "40 - 13 = 27."),
//  - counting runs ("count 4 5 6 7 8.").
// Sentences form paragraphs ended by a newline. Nothing blocks; throws
// ConfigError for a negative size.
#pragma once

#include <cstdint>
#include <string>

namespace strata::train {

// Exactly `bytes` bytes of ASCII text (the last sentence may be cut short).
std::string generateCorpus(uint64_t seed, int64_t bytes);

}  // namespace strata::train
