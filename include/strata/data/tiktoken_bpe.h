// tiktoken's rank files, the format OpenAI's tiktoken reads and Meta's
// original Llama 3 checkpoints ship as tokenizer.model: one token a line,
// "BASE64 RANK", the token's bytes in base64 and its rank, which is its id;
// the ranks run from 0 without a gap. The file holds no pattern and no
// special tokens, so the family is told by the number of ranks:
//  - 50256: GPT-2 (gpt2.tiktoken, tiktoken's r50k_base): GPT-2's pattern
//    (byte_level_bpe.h), <|endoftext|> = 50256 ends a document;
//  - 128000: Llama 3 (tokenizer.model): Llama 3's pattern, its 256 special
//    tokens from 128000 on (<|begin_of_text|> begins a document,
//    <|end_of_text|> ends it).
//
// Encoding follows tiktoken: the text is split by the family's pattern (on
// ICU, with \s as Unicode's White_Space, as tiktoken's Rust engine reads it);
// a piece that is itself a token is that token; otherwise its bytes are
// merged pairwise, the pair whose joined bytes have the lowest rank first.
// Special tokens are not recognised in text (encode treats "<|eot_id|>" as
// ordinary text, as tiktoken's encode_ordinary does); decode gives their text.
//
// The constructor throws ConfigError naming the file and line: a line that is
// not two fields, base64 that does not decode, a rank that is not a
// non-negative integer, a rank or a token given twice; naming the file: a gap
// in the ranks (the first missing one), a byte with no token of its own, or a
// number of ranks that is neither family's. decode() throws ConfigError naming
// an id outside the vocabulary. Nothing blocks. Immutable once built: encode
// and decode are thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "strata/data/byte_level_bpe.h"
#include "strata/data/tokenizer.h"

namespace strata::train {

class HfPreTokenizer;

// Whether `path`'s first line reads as a tiktoken rank line ("BASE64 RANK"):
// how a tokenizer.model in tiktoken's format is told from SentencePiece's
// binary one.
bool looksLikeTiktoken(const std::string& path);

class TiktokenBpe : public Tokenizer {
 public:
  explicit TiktokenBpe(const std::string& path);
  ~TiktokenBpe() override;

  std::vector<int64_t> encode(std::string_view text) const override;
  std::string decode(const std::vector<int64_t>& ids) const override;
  int64_t vocabSize() const override { return bpe_.vocabSize(); }
  std::optional<int64_t> endOfTextId() const override { return endOfText_; }
  std::optional<int64_t> beginOfTextId() const override { return beginOfText_; }
  std::string describe() const override { return description_; }

  // The ranks read from the file (the special tokens not counted).
  int64_t rankCount() const { return ranks_; }
  // The id of special token `name` ("<|eot_id|>"), if the family has it.
  std::optional<int64_t> specialId(std::string_view name) const;
  // The family's special tokens, in id order from rankCount().
  const std::vector<std::string>& specialTokens() const { return specials_; }
  // The family's pre-tokenizer pattern.
  const std::string& pattern() const { return pattern_; }
  // The bytes of the token of rank `rank` (< rankCount()).
  std::string rankBytes(int64_t rank) const { return bpe_.decode({rank}, "tiktoken"); }

 private:
  ByteLevelBpe bpe_;
  std::unique_ptr<HfPreTokenizer> pretokenizer_;
  std::vector<std::string> specials_;  // names, from id ranks_ on
  std::string pattern_;
  int64_t ranks_ = 0;
  std::optional<int64_t> endOfText_, beginOfText_;
  std::string description_;
};

}  // namespace strata::train
