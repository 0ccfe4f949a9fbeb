#include "inference/next_token_logits.h"

#include <torch/torch.h>

#include <algorithm>
#include <string>

#include "strata/error.h"

namespace strata::train {

NextTokenLogits::NextTokenLogits(torch::nn::Sequential model, int64_t context, bool kvCache)
    : model_(std::move(model)), context_(context) {
  if (!kvCache) return;
  cache_ = std::make_shared<tensor_parallel::KvCache>();
  try {
    tensor_parallel::useKvCache(*model_, cache_);
    // A model whose attention keeps no keys would see each new token alone.
    if (cache_->layers() == 0)
      throw ConfigError(
          "this model has no attention layer that decodes incrementally (a KV cache): "
          "generate with --no-kv-cache");
  } catch (...) {
    tensor_parallel::useKvCache(*model_, nullptr);  // the layers that joined leave
    throw;
  }
}

NextTokenLogits::~NextTokenLogits() {
  if (cache_) tensor_parallel::useKvCache(*model_, nullptr);
}

at::Tensor NextTokenLogits::operator()(const std::vector<int64_t>& ids) {
  int64_t length = static_cast<int64_t>(ids.size());
  int64_t windowStart = std::max<int64_t>(0, length - context_);
  if (!cache_) return lastLogits(ids, windowStart);
  if (windowStart != cacheStart_) {
    cache_->clear();
    cacheStart_ = windowStart;
  }
  int64_t from = cacheStart_ + cache_->position();  // the first token the cache lacks
  if (from >= length)
    throw Error("next-token logits: the sequence has no token the KV cache has not seen (" +
                std::to_string(length) + " tokens, " + std::to_string(from) + " fed)");
  at::Tensor logits = lastLogits(ids, from);
  cache_->advance(length - from);
  return logits;
}

at::Tensor NextTokenLogits::lastLogits(const std::vector<int64_t>& ids, int64_t from) {
  at::Tensor tokens =
      torch::tensor(std::vector<int64_t>(ids.begin() + from, ids.end()), torch::kLong)
          .unsqueeze(0);                        // [1, s]
  at::Tensor logits = model_->forward(tokens);  // [s, 1, vocab]
  return logits[-1][0];
}

}  // namespace strata::train
