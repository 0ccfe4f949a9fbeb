// Hugging Face tokenizer.json files of the byte-level BPE kind, as Llama 3,
// GPT-2 and Qwen ship them (what is read and refused: formats/tokenizer_json.h).
//
// Encoding follows Hugging Face's `tokenizers`: the text is normalized (NFC
// where the file says so), split by the pre-tokenizer (Split patterns, then
// ByteLevel's optional leading space and GPT-2 pattern), and each piece's
// UTF-8 bytes are merged, lowest-ranked pair first, by the model shared with
// GPT-2's files (byte_level_bpe.h). With ignore_merges (Llama 3) a piece that
// is itself in the vocabulary is that one token, unmerged. Patterns run on
// ICU's regular expressions, which read the Oniguruma patterns of these files
// as Hugging Face's Rust library does: \p{L} and \p{N} are Unicode's letters
// and numbers (of ICU's Unicode version: 15.0 for Debian 12's ICU 72), \s is
// Unicode's White_Space (U+0085 yes, U+FEFF no), (?!...) looks ahead, and
// (?i:...) folds case by Unicode's case folding (so 'ſ matches 's). Tests
// check the ids against Hugging Face's tokenizers and tiktoken on a
// tokenizer.json made from Meta's Llama 3 ranks
// (tests/tokenizer/reference/llama_reference.py).
//
// Added tokens (Llama 3's <|begin_of_text|>, <|end_of_text|> and 254 more):
// encode(text) treats their text as ordinary text, so a training document
// that quotes "<|end_of_text|>" does not end there, as the GPT-2 and
// SentencePiece tokenizers do. encode(text, AddedTokens::kRecognised)
// splits them out first, as Hugging Face's encode does, leftmost and then
// longest first; added tokens marked normalized are looked for in the
// normalized text, the others in the text as given. Neither adds the
// post-processor's BOS/EOS: whoever joins documents does (see below).
//
// Beginning and end of text, read from tokenizer_config.json beside the file
// when there is one, which wins, then from the file:
//  - endOfTextId(): the config's eos_token; else the one special token the
//    post-processor's template puts after the text; else an added token
//    <|endoftext|> (GPT-2's and Qwen's).
//  - beginOfTextId(): none when the config says add_bos_token false;
//    else the config's bos_token; else the one special token the template
//    puts before the text. None either when it is the end-of-text token
//    (GPT-2's config names <|endoftext|> for both): documents are then
//    separated by it once.
// Llama 3's file puts <|begin_of_text|> in front through its template (later
// uploads) or only names it in the config (the first uploads): either way
// each document starts with it.
//
// The constructor throws ConfigError naming the file: what
// formats::readTokenizerJson() refuses, an id given to two tokens, an added
// token whose id the vocabulary gives to another token, a vocabulary without
// a token for each of the 256 bytes, a merge whose parts or result are not in
// the vocabulary (with its index), a config token that is not in the
// vocabulary. encode() throws ConfigError naming the byte offset of text that
// is not UTF-8; encode(text, kRecognised) throws ConfigError for a file with
// an added token marked lstrip, rstrip or single_word, which it does not
// implement. decode() throws ConfigError naming an id outside the
// vocabulary; an added token decodes to its text. Nothing blocks.
// Immutable once built: encode and decode are thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "strata/data/byte_level_bpe.h"
#include "strata/data/tokenizer.h"

namespace strata::train {

class HfPreTokenizer;

class HfTokenizer : public Tokenizer {
 public:
  // Whether encode() turns added tokens written in the text into their ids.
  enum class AddedTokens { kAsText, kRecognised };

  // Reads `path`, a tokenizer.json, and tokenizer_config.json beside it when
  // there is one.
  explicit HfTokenizer(const std::string& path);
  ~HfTokenizer() override;

  std::vector<int64_t> encode(std::string_view text) const override;
  std::vector<int64_t> encode(std::string_view text, AddedTokens addedTokens) const;
  std::string decode(const std::vector<int64_t>& ids) const override;
  int64_t vocabSize() const override { return bpe_.vocabSize(); }
  std::optional<int64_t> beginOfTextId() const override { return beginOfText_; }
  std::optional<int64_t> endOfTextId() const override { return endOfText_; }
  std::string describe() const override { return description_; }

  // The id of the added token written `content`, if the file has one.
  std::optional<int64_t> addedTokenId(std::string_view content) const;
  size_t mergeCount() const { return bpe_.mergeCount(); }

 private:
  // Added tokens looked for in one kind of text, raw or normalized.
  struct AddedTokenTable {
    std::unordered_map<std::string, int64_t> ids;  // content -> id
    std::vector<size_t> lengths;                   // of the contents, longest first
    bool firstBytes[256] = {};                     // bytes a content starts with
  };
  // Calls onText for the text between added tokens of `table`, and appends
  // the ids of those tokens, in order.
  template <typename OnText>
  void splitAddedTokens(std::string_view text, const AddedTokenTable& table,
                        std::vector<int64_t>& ids, OnText onText) const;
  void encodeNormalized(std::string_view text, std::vector<int64_t>& ids) const;

  std::string path_;
  ByteLevelBpe bpe_;
  std::unique_ptr<const HfPreTokenizer> preTokenizer_;
  bool ignoreMerges_ = false;
  AddedTokenTable rawAdded_, normalizedAdded_;
  std::unordered_map<std::string, int64_t> addedIds_;  // every added token
  std::string unsupportedAdded_;  // an lstrip / rstrip / single_word token, if any
  std::optional<int64_t> beginOfText_, endOfText_;
  std::string description_;
};

}  // namespace strata::train
