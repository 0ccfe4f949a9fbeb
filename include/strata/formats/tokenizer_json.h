// Hugging Face's tokenizer.json (the file the `tokenizers` library saves and
// every Hub checkpoint ships), read into a plain struct: the part Strata
// implements, which is the byte-level BPE of Llama 3, GPT-2 and Qwen.
//
// What is read, and what is refused:
//  - model: type "BPE" (a file without a type but with merges counts as one),
//    its vocab (token -> id), merges (in rank order, each "left right" or
//    ["left", "right"]) and ignore_merges. Unigram and WordPiece models are
//    refused, and so are continuing_subword_prefix, end_of_word_suffix and a
//    non-zero dropout. unk_token and byte_fallback are accepted and unused: a
//    byte-level vocabulary has a token for every byte, so nothing is unknown.
//  - normalizer: none, NFC, or a Sequence of those.
//  - pre_tokenizer: Split (a Regex or String pattern, behavior Isolated or
//    Removed, invert false), then ByteLevel (add_prefix_space, use_regex),
//    possibly in a Sequence; exactly one ByteLevel, and it comes last.
//  - post_processor: none, ByteLevel (which adds no tokens), TemplateProcessing
//    (its "single" template: the ids of the special tokens before and after
//    the text), or a Sequence of those.
//  - decoder: none or ByteLevel.
//  - added_tokens: id, content and the special, lstrip, rstrip, single_word
//    and normalized flags.
//  truncation and padding are ignored: they shape model inputs, not ids.
// A SentencePiece-style file (Llama 2's and Mistral's tokenizer.json, with
// Metaspace or a Replace normalizer and byte_fallback) is refused as not
// byte-level; their tokenizer.model is loaded directly instead.
//
// readTokenizerJson() throws ConfigError naming the file and the problem: a
// file that cannot be read or is not JSON, a missing or mistyped field (named
// by its path in the file, e.g. model.merges[3]), and anything refused above,
// listing what is supported. Nothing blocks.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace strata::formats {

struct TokenizerJson {
  enum class Normalizer { kNone, kNfc };
  enum class SplitBehavior { kIsolated, kRemoved };

  struct PreTokenizerStep {
    enum class Kind { kSplit, kByteLevel };
    Kind kind = Kind::kSplit;
    // kSplit: the pattern, a regular expression (Oniguruma's syntax in the
    // file) or, when !patternIsRegex, a literal string.
    std::string pattern;
    bool patternIsRegex = true;
    SplitBehavior behavior = SplitBehavior::kIsolated;
    // kByteLevel: put a space in front of each piece that lacks one, and
    // split the pieces by GPT-2's pattern.
    bool addPrefixSpace = false;
    bool useRegex = true;
  };

  struct AddedToken {
    int64_t id = 0;
    std::string content;
    bool special = false;
    bool lstrip = false;
    bool rstrip = false;
    bool singleWord = false;
    bool normalized = false;  // matched in normalized text rather than raw
  };

  std::string path;  // where it was read from, for messages
  Normalizer normalizer = Normalizer::kNone;
  std::vector<PreTokenizerStep> preTokenizer;               // in order; the last is ByteLevel
  std::vector<std::pair<std::string, int64_t>> vocab;       // token -> id, file order
  std::vector<std::pair<std::string, std::string>> merges;  // rank order
  bool ignoreMerges = false;
  std::vector<AddedToken> addedTokens;
  // The post-processor's template for one text: ids put before and after it.
  std::vector<int64_t> templatePrefix, templateSuffix;
};

TokenizerJson readTokenizerJson(const std::string& path);

}  // namespace strata::formats
