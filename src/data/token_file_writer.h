// Writes a prepared dataset (the format is in strata/data/prepared_data.h):
// documents are appended in order to PREFIX.bin.partial, and finish() writes
// PREFIX.idx.partial and renames both into place, the index last, so a
// reader never sees a half-written pair as complete. Throws ConfigError
// naming the file when it cannot be written, and naming the document and
// token for an id that does not fit the width or the vocabulary.
#pragma once

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

namespace strata::train {

// `ids` as little-endian integers of `width` bytes; throws ConfigError
// naming the id and its position for one outside [0, vocabSize).
std::vector<unsigned char> packTokens(const std::vector<int64_t>& ids, int width,
                                      int64_t vocabSize);

class TokenFileWriter {
 public:
  // With `lossMask`, also PREFIX.mask (prepared_data.h): each document
  // then comes with its mask.
  TokenFileWriter(std::string prefix, int width, int64_t vocabSize, bool lossMask = false);

  void append(const std::vector<int64_t>& document);
  // A document packed by packTokens() with this writer's width.
  void appendPacked(const unsigned char* bytes, size_t size);
  // The loss mask of the document appended last, one byte a token.
  void appendLossMask(const std::vector<uint8_t>& mask);
  void finish();

  int64_t documents() const { return static_cast<int64_t>(starts_.size()) - 1; }
  int64_t tokens() const { return starts_.back(); }

 private:
  std::string prefix_;
  int width_;
  int64_t vocabSize_;
  bool lossMask_;
  std::ofstream bin_, mask_;
  uint64_t maskTokens_ = 0;
  std::vector<uint64_t> starts_{0};
};

}  // namespace strata::train
