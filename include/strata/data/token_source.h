// A sequence of token ids read by position: the tokens a WindowDataset cuts
// into windows, held in memory (a tensor) or read from a prepared,
// memory-mapped token file (prepared_data.h).
//
// read() copies tokens [begin, begin + count) into `out` as int64 and throws
// ConfigError naming the source and the range when it lies outside
// [0, size()); a source over a file also throws ConfigError naming the file
// and byte offset of a token outside the vocabulary (a corrupt file).
// A source may also carry a loss mask (a prepared dataset's PREFIX.mask):
// one byte a token, 1 where the token counts in the loss; readLossMask()
// throws ConfigError for a source without one.
// A source read from documents (a prepared dataset) knows where each one
// starts: readDocumentIds() writes, for each token of the range, the number
// of the document it belongs to (increasing along the source; only whether
// two tokens share a number matters), and documentStarts() where each
// document starts; both throw ConfigError for a source without documents.
// Sources are immutable once built: read() may be called from several
// threads at once. Nothing blocks or communicates.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace strata::train {

class TokenSource {
 public:
  virtual ~TokenSource() = default;
  virtual int64_t size() const = 0;
  virtual void read(int64_t begin, int64_t count, int64_t* out) const = 0;
  virtual bool hasLossMask() const { return false; }
  virtual void readLossMask(int64_t begin, int64_t count, uint8_t* out) const;
  virtual bool hasDocuments() const { return false; }
  virtual void readDocumentIds(int64_t begin, int64_t count, int64_t* out) const;
  // Increasing token positions, the first 0; the last document ends at size().
  virtual std::vector<int64_t> documentStarts() const;
};

// Throws ConfigError (named after `name`) unless 0 <= begin <= begin + count <= size.
void checkTokenRange(const std::string& name, int64_t begin, int64_t count, int64_t size);

// A 1-D int64 tensor's tokens (the tensor is kept, not copied).
std::shared_ptr<const TokenSource> tensorTokens(at::Tensor tokens);

}  // namespace strata::train
