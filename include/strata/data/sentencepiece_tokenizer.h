// SentencePiece tokenizers (Google's library, Debian's libsentencepiece):
// training a model on the user's text, and encoding and decoding with a
// .model file.
//
// The library is loaded at run time from Strata's own small plugin,
// libstrata_sentencepiece.so, opened with dlopen(RTLD_LOCAL | RTLD_DEEPBIND)
// on first use. Debian's libsentencepiece carries a private copy of protobuf
// 3.14 whose symbols clash with any other protobuf in the process (Debian's
// LibTorch 1.13 loaded 3.21, and linked into one program the two crashed at
// start-up). Kept in its own symbol scope, it uses its own whatever else the
// process loads. The plugin is looked for in
// $STRATA_SENTENCEPIECE_LIBRARY, next to the running program, in
// ../lib/strata/ from it, in the build tree and in the install prefix; when
// none is found the error lists where it looked.
//
// Throws ConfigError naming the file: a .model that is missing or is not a
// SentencePiece model, training input that cannot be read, training that
// fails (SentencePiece's own message, e.g. a vocabulary too large for the
// text). encode() throws ConfigError naming the byte offset of text that is
// not UTF-8. Training blocks for as long as it takes and prints
// SentencePiece's progress to stderr. A loaded tokenizer is immutable:
// encode and decode are thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "strata/data/tokenizer.h"

namespace strata::train {

struct SentencePieceTrainOptions {
  std::vector<std::string> inputs;  // text files; each line is a sentence
  std::string outputPrefix;         // writes PREFIX.model and PREFIX.vocab
  int64_t vocabSize = 8000;
  std::string modelType = "unigram";  // unigram, bpe, char or word
  double characterCoverage = 0.9995;  // share of characters the vocabulary covers
  // Bytes absent from the vocabulary become <0xNN> tokens instead of <unk>.
  bool byteFallback = false;
};

// Trains a model on opt.inputs; throws ConfigError as above.
void trainSentencePiece(const SentencePieceTrainOptions& opt);

class SentencePieceTokenizer : public Tokenizer {
 public:
  explicit SentencePieceTokenizer(const std::string& modelPath);
  ~SentencePieceTokenizer() override;

  std::vector<int64_t> encode(std::string_view text) const override;
  std::string decode(const std::vector<int64_t>& ids) const override;
  int64_t vocabSize() const override { return vocabSize_; }
  std::optional<int64_t> endOfTextId() const override { return endOfText_; }
  std::string describe() const override { return description_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  int64_t vocabSize_ = 0;
  std::optional<int64_t> endOfText_;
  std::string description_;
};

}  // namespace strata::train
