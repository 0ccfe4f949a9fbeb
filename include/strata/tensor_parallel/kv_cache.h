// Incremental decoding: a model that has seen t tokens of its sequences
// takes only the next ones, its attention layers reading the keys and
// values of the first t from a cache instead of computing them again.
// Generating n tokens then costs n token-sized forwards rather than n
// forwards of the whole window.
//
//   model:  useKvCache(*model, cache)    every layer that decodes joins
//   step:   logits = model->forward(new) new: ids [b, s'] at positions
//           cache->advance(s')           [t, t + s'); the cache now holds t + s'
//
// A layer that takes part (DecodesIncrementally) is an attention layer,
// which appends its new keys and values to its own slot and lets each new
// query see every key up to its own position, or a learned position
// embedding, which adds the rows of positions [t, t + s'). Causal attention
// makes the logits those of the whole sequence in one forward: positions
// never see the tokens after them, so the first t are unchanged by the new.
//
// One process, whole layers: tp 1, no context parallelism, no sequence
// parallelism, eval mode. Nothing blocks or communicates.
#pragma once

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

namespace strata::tensor_parallel {

class KvCache {
 public:
  // Tokens of every sequence the cache holds: where the next forward's
  // tokens start.
  int64_t position() const { return position_; }

  // A slot for one attention layer's keys and values (each layer joins once).
  int64_t addLayer();
  int64_t layers() const { return static_cast<int64_t>(layers_.size()); }

  // Appends the new keys and values [b, heads, s', d] of this forward to
  // layer `slot`'s and returns all of them, [b, heads, position + s', d]
  // (views of the cache's buffers, valid until the next append).
  // Throws ConfigError for a slot that does not exist, or one appended to
  // twice in a forward (the same layer run twice without advance()).
  std::pair<at::Tensor, at::Tensor> append(int64_t slot, const at::Tensor& keys,
                                           const at::Tensor& values);

  // After a forward of `tokens` new tokens: every layer now holds
  // position + tokens. Throws ConfigError naming the slot when a layer
  // holds another count (a layer skipped, or a forward of other tokens).
  void advance(int64_t tokens);

  // Forgets every token: position 0, the layers' slots (and buffers) kept.
  void clear();

 private:
  struct Layer {
    at::Tensor keys;  // [b, heads, capacity, d]; the first `length` tokens held
    at::Tensor values;
    int64_t length = 0;
  };
  int64_t position_ = 0;
  std::vector<Layer> layers_;
};

// A layer that takes part in incremental decoding (see the top).
class DecodesIncrementally {
 public:
  virtual ~DecodesIncrementally() = default;
  // With a cache, forward takes the tokens after the cache's position; with
  // nullptr it takes whole sequences again. Throws ConfigError where the
  // layer is split over ranks (tp, cp or sequence parallel).
  virtual void decodeWith(std::shared_ptr<KvCache> cache) = 0;
};

// Throws ConfigError, naming `layer` and the split, unless the layer is
// whole: tp 1, no context and no sequence parallelism.
void checkDecodesWhole(const char* layer, int tpSize, bool contextParallel, bool sequenceParallel);

// An attention layer's place in a cache, as both attentions hold it.
class KvCacheSlot {
 public:
  // Takes a slot of `cache`, or with nullptr leaves it; checkDecodesWhole's
  // throws first.
  void join(std::shared_ptr<KvCache> cache, int tpSize, bool contextParallel,
            bool sequenceParallel);
  bool joined() const { return cache_ != nullptr; }
  // Where this forward's tokens start (0 when not joined).
  int64_t position() const { return cache_ ? cache_->position() : 0; }
  // This forward's queries [b, H, s', d] against every key so far: appends
  // the new keys and values [b, K, s', d] and returns cachedCausalAttention
  // [b, H, s', d]. Throws ConfigError in training mode, and as append.
  at::Tensor attend(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, bool training);

 private:
  std::shared_ptr<KvCache> cache_;
  int64_t slot_ = -1;
};

// Every module of `model` that decodes incrementally decodes with `cache`
// (nullptr: whole sequences again). Returns how many joined; throws as
// decodeWith.
int64_t useKvCache(torch::nn::Module& model, const std::shared_ptr<KvCache>& cache);

// Causal attention of s' new queries at positions [t, t + s') against the
// t + s' keys before and at them:
//   q [b, H, s', d], k, v [b, K, t + s', d] (K dividing H; query head h
//   reads kv head h / (H / K))  ->  [b, H, s', d]
// softmax(q k^T / sqrt(d), key j > t + i masked) v.
at::Tensor cachedCausalAttention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v);

}  // namespace strata::tensor_parallel
