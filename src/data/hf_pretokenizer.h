// The normalizer and pre-tokenizer of a tokenizer.json, compiled: text in,
// the bytes of its pieces out, for the BPE model to merge one by one. What
// the patterns mean on ICU's engine: strata/data/hf_tokenizer.h.
//
// The constructor throws ConfigError naming the file and the pattern ICU
// cannot compile; split() throws ConfigError when ICU's matcher fails on a
// text (it reports no failure for valid UTF-8 with these patterns). Nothing
// blocks. Immutable once built: normalize() and split() are thread-safe
// (each call makes its own matcher).
#pragma once

#include <unicode/normalizer2.h>
#include <unicode/regex.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "strata/formats/tokenizer_json.h"

namespace strata::train {

class HfPreTokenizer {
 public:
  explicit HfPreTokenizer(const formats::TokenizerJson& file);

  // The text the normalizer makes of valid UTF-8 `text` (NFC, or the same).
  std::string normalize(std::string_view text) const;
  // Appends the pieces of normalized `text`, in order.
  void split(std::string_view text, std::vector<std::string>& pieces) const;

 private:
  struct Step {
    std::shared_ptr<const icu::RegexPattern> pattern;  // null: no split
    bool removeMatches = false;                        // Split's Removed
    bool addPrefixSpace = false;                       // ByteLevel's
  };
  std::vector<Step> steps_;
  const icu::Normalizer2* nfc_ = nullptr;  // ICU's own instance; null: no normalizer
};

}  // namespace strata::train
