// Byte-level BPE, the model that GPT-2's files (gpt2_bpe.h) and Hugging
// Face's byte-level tokenizer.json (hf_tokenizer.h) share: a vocabulary of
// byte strings, spelled in the files in GPT-2's alphabet of 256 printable
// characters, one for each byte (bytes_to_unicode() of OpenAI's encoder.py),
// and ranked merges applied to the bytes of one pre-tokenized piece, lowest
// rank first, every occurrence left to right.
//
// The tokenizers fill one from their files and name the file in its errors:
// findByteTokens() and spelledId() throw ConfigError with the file (and
// place) the caller gives. decode() throws ConfigError naming an id the
// vocabulary does not give. Nothing blocks. Once built it is only read:
// encodePiece(), find() and decode() are thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace strata::train {

// GPT-2's pre-tokenizer pattern, as OpenAI's encoder.py and Hugging Face's
// ByteLevel pre-tokenizer (with use_regex) split text by it.
inline constexpr const char* kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

// The bytes a token spelled in GPT-2's alphabet stands for, or nullopt when a
// character of it is not one of the 256 (a token written plainly, such as an
// added token with a space in it) or it is not UTF-8.
std::optional<std::string> byteLevelBytes(std::string_view spelled);
// `bytes` spelled in GPT-2's alphabet, as vocab.json and tokenizer.json write
// a byte-level token: byteLevelBytes's inverse.
std::string byteLevelSpelling(std::string_view bytes);

class ByteLevelBpe {
 public:
  ByteLevelBpe() = default;
  // A vocabulary of ids 0 .. vocabSize - 1, none of them given yet.
  explicit ByteLevelBpe(int64_t vocabSize);

  // Gives `id` the token of `bytes`, which merges and find() can produce.
  // Returns false, changing nothing, when `id` is already given.
  bool addToken(int32_t id, std::string bytes);
  // Gives `id` a token that decodes to `text` but that merges and find()
  // never produce: a special token, which only its id stands for.
  bool addVerbatimToken(int32_t id, std::string text);
  // Gives `id` the token a file spells `spelled`: in GPT-2's alphabet, the
  // bytes it stands for (addToken); otherwise, as an added token written
  // plainly, itself (addVerbatimToken).
  bool addSpelledToken(int32_t id, const std::string& spelled);
  // Looks up the token of each single byte, where encodePiece() starts.
  // Throws ConfigError "VOCABULARY: no token for byte 0x.." when one has
  // none: the vocabulary is then not byte-level.
  void findByteTokens(const std::string& vocabulary);
  // The id of the token a file spells `spelled`, for a merge. Throws
  // ConfigError "WHERE: ..." when it is not spelled in GPT-2's alphabet or
  // is not in the vocabulary (named `vocabulary`).
  int32_t spelledId(const std::string& spelled, const std::string& where,
                    const std::string& vocabulary) const;
  // Merges `left` then `right` into `merged`, ranked after the merges added
  // before. A pair added again keeps its last rank, as encoder.py's dict and
  // Hugging Face's map of merges do.
  void addMerge(int32_t left, int32_t right, int32_t merged);
  // Merges `left` then `right` into `merged` at `rank`, which other pairs may
  // share: tiktoken ranks a pair by the token it makes, so every split of one
  // token has that token's rank (the leftmost pair wins a tie).
  void addMergeAtRank(int32_t left, int32_t right, int32_t merged, int32_t rank);

  // The id of the (not verbatim) token of exactly these bytes.
  std::optional<int32_t> find(std::string_view bytes) const;
  // Appends the ids of `piece`'s bytes, merged.
  void encodePiece(std::string_view piece, std::vector<int64_t>& out) const;
  // The bytes the ids stand for; `vocabulary` names it in the error for an
  // id that is not given ("token id 7 is not in the GPT-2 vocabulary of ...").
  std::string decode(const std::vector<int64_t>& ids, std::string_view vocabulary) const;

  int64_t vocabSize() const { return static_cast<int64_t>(tokenBytes_.size()); }
  // Ids given, and distinct merges.
  size_t tokenCount() const { return given_; }
  size_t mergeCount() const { return merges_.size(); }

 private:
  struct Merge {
    int32_t rank;
    int32_t merged;  // the id of the two parts joined
  };
  bool give(int32_t id, std::string bytes);

  int32_t byteIds_[256] = {};                     // the token of each single byte
  std::unordered_map<uint64_t, Merge> merges_;    // key: left id << 32 | right id
  std::unordered_map<std::string, int32_t> ids_;  // bytes -> id, not verbatim tokens
  std::vector<std::string> tokenBytes_;           // id -> the bytes it stands for
  std::vector<bool> known_;                       // id -> given
  size_t given_ = 0;
  int32_t nextRank_ = 0;  // merges added, repeated pairs included
};

}  // namespace strata::train
