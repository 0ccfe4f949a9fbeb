#include "strata/tensor_parallel/kv_cache.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "context_parallel/block_attention.h"
#include "strata/error.h"

namespace strata::tensor_parallel {
namespace {

std::string digits(int64_t value) { return std::to_string(value); }

std::string shape(const at::Tensor& t) {
  std::string out = "[";
  for (int64_t i = 0; i < t.dim(); ++i) out += (i ? ", " : "") + digits(t.size(i));
  return out + "]";
}

// Whether `a` and `b` [b, heads, *, d] have the same batch, heads, head
// dimension and dtype.
bool sameRows(const at::Tensor& a, const at::Tensor& b) {
  return a.size(0) == b.size(0) && a.size(1) == b.size(1) && a.size(3) == b.size(3) &&
         a.scalar_type() == b.scalar_type();
}

// Room for `needed` tokens: the buffer doubles when it is full, so a token
// costs a copy of the whole cache only log-many times in a generation.
at::Tensor withRoom(const at::Tensor& buffer, int64_t held, int64_t needed,
                    const at::Tensor& like) {
  bool reusable = buffer.defined() && sameRows(buffer, like);
  if (reusable && buffer.size(2) >= needed) return buffer;
  int64_t capacity = std::max(needed, reusable ? 2 * buffer.size(2) : needed);
  at::Tensor grown =
      at::empty({like.size(0), like.size(1), capacity, like.size(3)}, like.options());
  if (held > 0) grown.narrow(2, 0, held).copy_(buffer.narrow(2, 0, held));
  return grown;
}

}  // namespace

int64_t KvCache::addLayer() {
  if (position_ != 0)
    throw ConfigError("a layer cannot join a KV cache that already holds " + digits(position_) +
                      " tokens: join every layer before the first forward");
  layers_.emplace_back();
  return layers() - 1;
}

std::pair<at::Tensor, at::Tensor> KvCache::append(int64_t slot, const at::Tensor& keys,
                                                  const at::Tensor& values) {
  if (slot < 0 || slot >= layers())
    throw ConfigError("KV cache slot " + digits(slot) + " does not exist (" + digits(layers()) +
                      " layers joined)");
  Layer& layer = layers_[static_cast<size_t>(slot)];
  if (layer.length != position_)
    throw ConfigError("KV cache slot " + digits(slot) + " already took this forward's tokens (" +
                      digits(layer.length) + " cached at position " + digits(position_) +
                      "): advance() after each forward");
  if (layer.length > 0 && !sameRows(layer.keys, keys))
    throw ConfigError("KV cache slot " + digits(slot) + " holds keys of shape " +
                      shape(layer.keys.narrow(2, 0, layer.length)) + ", the new ones are " +
                      shape(keys) + ": the batch, heads and head dimension must stay");
  int64_t total = layer.length + keys.size(2);
  layer.keys = withRoom(layer.keys, layer.length, total, keys);
  layer.values = withRoom(layer.values, layer.length, total, values);
  layer.keys.narrow(2, layer.length, keys.size(2)).copy_(keys);
  layer.values.narrow(2, layer.length, values.size(2)).copy_(values);
  layer.length = total;
  return {layer.keys.narrow(2, 0, total), layer.values.narrow(2, 0, total)};
}

void KvCache::advance(int64_t tokens) {
  for (int64_t slot = 0; slot < layers(); ++slot) {
    int64_t held = layers_[static_cast<size_t>(slot)].length;
    if (held != position_ + tokens)
      throw ConfigError("KV cache slot " + digits(slot) + " holds " + digits(held) +
                        " tokens, not the " + digits(position_ + tokens) + " of position " +
                        digits(position_) + " + " + digits(tokens) +
                        " new: every joined layer must see each forward");
  }
  position_ += tokens;
}

void KvCache::clear() {
  position_ = 0;
  for (Layer& layer : layers_) layer.length = 0;  // the buffers stay, to be written over
}

void checkDecodesWhole(const char* layer, int tpSize, bool contextParallel, bool sequenceParallel) {
  if (tpSize > 1 || contextParallel || sequenceParallel)
    throw ConfigError(std::string("incremental decoding needs whole layers: this ") + layer +
                      " is split (tp " + digits(tpSize) +
                      (contextParallel ? ", context parallel" : "") +
                      (sequenceParallel ? ", sequence parallel" : "") + ")");
}

void KvCacheSlot::join(std::shared_ptr<KvCache> cache, int tpSize, bool contextParallel,
                       bool sequenceParallel) {
  if (cache) checkDecodesWhole("attention", tpSize, contextParallel, sequenceParallel);
  slot_ = cache ? cache->addLayer() : -1;
  cache_ = std::move(cache);
}

at::Tensor KvCacheSlot::attend(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                               bool training) {
  if (training) throw ConfigError("incremental decoding is for eval mode: the model is training");
  auto [keys, values] = cache_->append(slot_, k, v);  // [b, K, t + s', d]
  return cachedCausalAttention(q, keys, values);
}

int64_t useKvCache(torch::nn::Module& model, const std::shared_ptr<KvCache>& cache) {
  int64_t joined = 0;
  auto join = [&](torch::nn::Module& module) {
    if (auto* layer = dynamic_cast<DecodesIncrementally*>(&module)) {
      layer->decodeWith(cache);
      ++joined;
    }
  };
  join(model);
  for (const auto& module : model.modules(/*include_self=*/false)) join(*module);
  return joined;
}

at::Tensor cachedCausalAttention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) {
  int64_t b = q.size(0), heads = q.size(1), s = q.size(2), d = q.size(3);
  int64_t total = k.size(2);
  int64_t first = total - s;  // the new queries' first position
  at::Tensor keys = context_parallel::detail::repeatKvHeads(k, heads);    // [b, H, t + s', d]
  at::Tensor values = context_parallel::detail::repeatKvHeads(v, heads);  // [b, H, t + s', d]
  // Query i sits at position first + i and sees keys 0 .. first + i.
  at::Tensor future = at::full({s, total}, -INFINITY, q.options()).triu_(first + 1);
  at::Tensor scores = at::baddbmm(future, q.reshape({b * heads, s, d}),
                                  keys.reshape({b * heads, total, d}).transpose(1, 2), 1.0,
                                  1.0 / std::sqrt(static_cast<double>(d)));  // [b H, s', t + s']
  at::Tensor probabilities = at::softmax(scores, -1);
  return at::bmm(probabilities, values.reshape({b * heads, total, d})).view({b, heads, s, d});
}

}  // namespace strata::tensor_parallel
