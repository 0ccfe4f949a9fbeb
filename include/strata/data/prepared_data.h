// A prepared dataset: the token file PREFIX.bin and the index of document
// boundaries PREFIX.idx that `strata data prepare` writes (prepare.h), read
// through a read-only memory map so every process on a host shares one copy
// of the corpus in the page cache and none loads it whole.
//
// PREFIX.bin: the tokens of every document, one after another, each token an
// unsigned little-endian integer of the index's token width (2 bytes when the
// vocabulary has at most 65536 ids, else 4). Nothing else: no header.
//
// PREFIX.idx, little-endian:
//   offset  size  field
//   0       8     magic "STRTOKIX"
//   8       4     version (1)
//   12      4     token width in bytes: 2 or 4
//   16      8     vocabulary size V (every token is < V)
//   24      8     document count D
//   32      8     token count N (PREFIX.bin is N x width bytes)
//   40      32    SHA-256 of bytes [0, 40) followed by bytes [72, end)
//   72      8(D+1) document starts as token offsets: 0 = s_0 <= ... <= s_D = N
// Document d is tokens [s_d, s_{d+1}).
//
// PREFIX.mask, written for conversations (`strata data prepare --chat`),
// which tokens are the assistant's, little-endian:
//   0       8     magic "STRLMASK"
//   8       4     version (1)
//   12      4     0
//   16      8     token count N, as the index's
//   24      N     one byte a token: 1 the assistant's, 0 not
// A dataset without it has no loss mask (every token counts).
//
// Opening checks the whole index (magic, version, width, size, checksum,
// the starts) and that PREFIX.bin has exactly N tokens; reading checks each
// token against V. Every failure is a ConfigError naming the file and the
// byte offset of what is wrong. Reads never block beyond page faults.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "strata/data/token_source.h"

namespace strata::formats {
class MappedFile;
}  // namespace strata::formats

namespace strata::train {

class Tokenizer;

constexpr char kIndexMagic[] = "STRTOKIX";  // 8 bytes, no terminator in the file
constexpr uint32_t kIndexVersion = 1;
constexpr size_t kIndexHeaderBytes = 72;
constexpr char kLossMaskMagic[] = "STRLMASK";
constexpr uint32_t kLossMaskVersion = 1;
constexpr size_t kLossMaskHeaderBytes = 24;

// The token width a vocabulary needs: 2 when every id fits 16 bits, else 4.
int tokenWidthFor(int64_t vocabSize);

class PreparedData {
 public:
  // Maps PREFIX.idx and PREFIX.bin and checks them (see above).
  explicit PreparedData(const std::string& prefix);
  ~PreparedData();
  PreparedData(const PreparedData&) = delete;
  PreparedData& operator=(const PreparedData&) = delete;

  int64_t documents() const { return documents_; }
  int64_t tokens() const { return tokens_; }
  int64_t vocabSize() const { return vocabSize_; }
  int tokenWidth() const { return width_; }
  // s_d for d in [0, documents()]; throws ConfigError outside it.
  int64_t documentStart(int64_t document) const;
  // Tokens [begin, begin + count) of PREFIX.bin as int64 (see TokenSource).
  void read(int64_t begin, int64_t count, int64_t* out) const;
  // Whether PREFIX.mask is there (checked against the index on opening).
  bool hasLossMask() const { return lossMask_ != nullptr; }
  // Its bytes [begin, begin + count); ConfigError naming the byte offset of
  // one that is not 0 or 1, and when there is no mask.
  void readLossMask(int64_t begin, int64_t count, uint8_t* out) const;

  const std::string& prefix() const { return prefix_; }
  std::string indexPath() const { return prefix_ + ".idx"; }
  std::string tokenPath() const { return prefix_ + ".bin"; }
  std::string lossMaskPath() const { return prefix_ + ".mask"; }

 private:
  void checkIndex();
  void openLossMask();

  std::string prefix_;
  std::unique_ptr<formats::MappedFile> index_;
  std::unique_ptr<formats::MappedFile> tokenFile_;
  std::unique_ptr<formats::MappedFile> lossMask_;
  int width_ = 2;
  int64_t vocabSize_ = 0;
  int64_t documents_ = 0;
  int64_t tokens_ = 0;
};

// The prepared dataset at `prefix`, checked to have been prepared with
// `tokenizer`'s vocabulary (ConfigError naming both otherwise).
std::shared_ptr<const PreparedData> openPrepared(const std::string& prefix,
                                                 const Tokenizer& tokenizer);

}  // namespace strata::train
