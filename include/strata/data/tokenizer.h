// Tokenizers: text to token ids and back.
//
// Five kinds, chosen with makeTokenizer(spec):
//  - "byte": every byte of the text is one token, so the vocabulary is
//    exactly 256 ids (0..255) and any text round-trips losslessly. For tiny
//    demos and tests; there are no special tokens (documents are joined with
//    a newline, which the model learns as an ordinary byte).
//  - a Hugging Face tokenizer.json of the byte-level BPE kind (Llama 3,
//    GPT-2, Qwen): a file whose name ends in .json, or a directory holding
//    tokenizer.json: see hf_tokenizer.h.
//  - a directory without tokenizer.json holding GPT-2's byte-level BPE files,
//    encoder.json and vocab.bpe (or Hugging Face's names for them, vocab.json
//    and merges.txt): see gpt2_bpe.h. A directory with both is read through
//    tokenizer.json, the only one of them that says how to pre-tokenize
//    (Qwen's vocab.json and merges.txt read with GPT-2's pattern would give
//    other ids).
//  - a file of tiktoken's ranks, "BASE64 RANK" a line (a name ending in
//    .tiktoken, or any file whose first line reads so): GPT-2's gpt2.tiktoken
//    or Meta's original Llama 3 tokenizer.model: see tiktoken_bpe.h.
//  - any other file: a SentencePiece .model (Llama 2, Mistral): see
//    sentencepiece_tokenizer.h.
//
// A model may have a larger vocabulary than its tokenizer (for example to
// make it divisible by tp); the extra ids are simply never produced.
//
// Nothing here blocks. Loading throws ConfigError naming the file for a
// missing or malformed one; decode() throws ConfigError naming the id for
// one outside the vocabulary; the tokenizer.json, GPT-2, tiktoken and
// SentencePiece tokenizers' encode() throws ConfigError naming the byte offset of text that
// is not UTF-8. A loaded tokenizer is immutable: encode and decode may be called
// from several threads at once.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace strata::train {

constexpr int64_t kByteVocabSize = 256;

std::vector<int64_t> encodeBytes(const std::string& text);
std::string decodeBytes(const std::vector<int64_t>& ids);

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;
  virtual std::vector<int64_t> encode(std::string_view text) const = 0;
  // The exact bytes the ids stand for (ids that end inside a multi-byte
  // character give that character's first bytes).
  virtual std::string decode(const std::vector<int64_t>& ids) const = 0;
  // One more than the largest id encode() can produce or decode() accepts.
  virtual int64_t vocabSize() const = 0;
  // The id that marks the end of a document, when the vocabulary has one
  // (GPT-2's <|endoftext|>, SentencePiece's </s>). encode() never produces
  // it from text: a caller joining documents appends it between them.
  virtual std::optional<int64_t> endOfTextId() const { return std::nullopt; }
  // The id that marks the start of a document, for a tokenizer whose models
  // were trained to see one there (Llama 3's <|begin_of_text|>; GPT-2,
  // SentencePiece and byte have none). encode() never produces it: a caller
  // joining documents puts it before each.
  virtual std::optional<int64_t> beginOfTextId() const { return std::nullopt; }
  // What it is and where it was loaded from, for logs and errors.
  virtual std::string describe() const = 0;
};

// The tokenizer `spec` names: "byte", a tokenizer.json (or a directory
// holding one), a directory of GPT-2 BPE files, a tiktoken file, or a
// SentencePiece .model file (see the top of this header). Throws ConfigError naming the path when
// it is none of them, or when its files are missing or malformed.
std::unique_ptr<Tokenizer> makeTokenizer(const std::string& spec);

// The files of tokenizer `spec` copied into `folder` under the names
// transformers looks for beside a model: tokenizer.json (with the
// tokenizer_config.json and special_tokens_map.json beside it, when there),
// tokenizer.model for SentencePiece and tiktoken files (Meta's name for
// Llama 3's; a tiktoken file also as tokenizer.json and tokenizer_config.json,
// tiktoken_hugging_face.h), vocab.json and merges.txt for GPT-2's
// BPE files. Returns the paths written: none for "byte", which has no file.
// Throws ConfigError as makeTokenizer for a spec that names no tokenizer,
// CheckpointError for a file that cannot be read or written.
std::vector<std::string> copyTokenizerFiles(const std::string& spec, const std::string& folder);

// The tokenizer copyTokenizerFiles left in `folder`, as makeTokenizer takes
// it; nullopt when the folder holds none.
std::optional<std::string> tokenizerIn(const std::string& folder);

}  // namespace strata::train
