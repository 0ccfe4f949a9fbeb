#include "strata/data/token_source.h"

#include <torch/torch.h>

#include <algorithm>

#include "strata/error.h"

namespace strata::train {
namespace {

class TensorTokens : public TokenSource {
 public:
  explicit TensorTokens(at::Tensor tokens) : tokens_(tokens.to(torch::kLong).contiguous()) {
    if (tokens_.dim() != 1)
      throw ConfigError("token tensor must be 1-D, got " + std::to_string(tokens_.dim()) +
                        " dimensions");
  }
  int64_t size() const override { return tokens_.size(0); }
  void read(int64_t begin, int64_t count, int64_t* out) const override {
    checkTokenRange("token tensor", begin, count, size());
    const int64_t* data = tokens_.data_ptr<int64_t>();
    std::copy(data + begin, data + begin + count, out);
  }

 private:
  at::Tensor tokens_;  // [n] int64, contiguous
};

}  // namespace

void checkTokenRange(const std::string& name, int64_t begin, int64_t count, int64_t size) {
  if (begin < 0 || count < 0 || begin > size || count > size - begin)
    throw ConfigError(name + ": tokens [" + std::to_string(begin) + ", " +
                      std::to_string(begin + count) + ") are outside [0, " + std::to_string(size) +
                      ")");
}

void TokenSource::readLossMask(int64_t, int64_t, uint8_t*) const {
  throw ConfigError(
      "this token source has no loss mask (only a dataset prepared with --chat has one)");
}

void TokenSource::readDocumentIds(int64_t, int64_t, int64_t*) const {
  throw ConfigError(
      "this token source has no document boundaries (only a prepared dataset has them)");
}

std::vector<int64_t> TokenSource::documentStarts() const {
  throw ConfigError(
      "this token source has no document boundaries (only a prepared dataset has them)");
}

std::shared_ptr<const TokenSource> tensorTokens(at::Tensor tokens) {
  return std::make_shared<TensorTokens>(std::move(tokens));
}

}  // namespace strata::train
