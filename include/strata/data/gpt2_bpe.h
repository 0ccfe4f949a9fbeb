// GPT-2's byte-level BPE, read from the files OpenAI published with GPT-2:
// encoder.json (token string -> id) and vocab.bpe (the merges, in rank
// order, after a "#version" line), or the same files under Hugging Face's
// names, vocab.json and merges.txt.
//
// Encoding follows OpenAI's encoder.py (and tiktoken, against which the
// tests check it on GPT-2's ranks): the text is split by GPT-2's
// pre-tokenizer pattern
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// with tiktoken's meaning of \s (Unicode's White_Space: U+0085 yes, U+FEFF
// no) and Unicode general categories L* and N* from ICU; each piece's UTF-8 bytes
// are then merged, lowest-ranked pair first, into vocabulary tokens. The
// categories are those of the ICU the library was built with (Unicode 15.0
// for Debian 12's ICU 72): a character assigned in a later Unicode version
// counts as neither letter nor number. Special tokens such as <|endoftext|>
// are not recognised in text (as in the reference encoders); endOfTextId()
// gives the id to insert between documents.
//
// Throws ConfigError naming the file: a missing file, encoder.json that is
// not a JSON object of token -> id, a merges line that is not two symbols
// (with its line number), or a merge whose parts or result are not in the
// vocabulary. Immutable once built: encode and decode are thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "strata/data/byte_level_bpe.h"
#include "strata/data/tokenizer.h"

namespace strata::train {

// GPT-2's pre-tokenizer alone: the [begin, end) byte ranges of the pieces of
// `text`, in order, covering all of it. Throws ConfigError naming the offset
// of the first byte that is not UTF-8.
std::vector<std::pair<size_t, size_t>> gpt2Pretokenize(std::string_view text);

class Gpt2Bpe : public Tokenizer {
 public:
  // Reads DIR/encoder.json and DIR/vocab.bpe, or DIR/vocab.json and
  // DIR/merges.txt.
  static std::unique_ptr<Gpt2Bpe> fromDirectory(const std::string& dir);
  Gpt2Bpe(const std::string& vocabPath, const std::string& mergesPath);

  std::vector<int64_t> encode(std::string_view text) const override;
  std::string decode(const std::vector<int64_t>& ids) const override;
  int64_t vocabSize() const override { return bpe_.vocabSize(); }
  std::optional<int64_t> endOfTextId() const override { return endOfText_; }
  std::string describe() const override { return description_; }

  // Number of distinct merges read.
  size_t mergeCount() const { return bpe_.mergeCount(); }

 private:
  ByteLevelBpe bpe_;
  std::optional<int64_t> endOfText_;
  std::string description_;
};

}  // namespace strata::train
