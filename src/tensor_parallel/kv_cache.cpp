#include "strata/tensor_parallel/kv_cache.h"

#include <torch/torch.h>

#include <cmath>
#include <string>

#include "context_parallel/block_attention.h"
#include "strata/error.h"

namespace strata::tensor_parallel {
namespace {

std::string n(int64_t value) { return std::to_string(value); }

int64_t tokensIn(const at::Tensor& cached) { return cached.defined() ? cached.size(2) : 0; }

}  // namespace

int64_t KvCache::addLayer() {
  if (position_ != 0)
    throw ConfigError("a layer cannot join a KV cache that already holds " + n(position_) +
                      " tokens: join every layer before the first forward");
  keys_.emplace_back();
  values_.emplace_back();
  return layers() - 1;
}

std::pair<at::Tensor, at::Tensor> KvCache::append(int64_t slot, const at::Tensor& keys,
                                                  const at::Tensor& values) {
  if (slot < 0 || slot >= layers())
    throw ConfigError("KV cache slot " + n(slot) + " does not exist (" + n(layers()) +
                      " layers joined)");
  at::Tensor& k = keys_[static_cast<size_t>(slot)];
  at::Tensor& v = values_[static_cast<size_t>(slot)];
  if (tokensIn(k) != position_)
    throw ConfigError("KV cache slot " + n(slot) + " already took this forward's tokens (" +
                      n(tokensIn(k)) + " cached at position " + n(position_) +
                      "): advance() after each forward");
  // One copy of the whole cache per token: generation's cost is the
  // forwards, and a preallocated buffer would need the length up front.
  k = k.defined() ? at::cat({k, keys}, 2) : keys.contiguous();
  v = v.defined() ? at::cat({v, values}, 2) : values.contiguous();
  return {k, v};
}

void KvCache::advance(int64_t tokens) {
  for (int64_t slot = 0; slot < layers(); ++slot) {
    int64_t held = tokensIn(keys_[static_cast<size_t>(slot)]);
    if (held != position_ + tokens)
      throw ConfigError("KV cache slot " + n(slot) + " holds " + n(held) + " tokens, not the " +
                        n(position_ + tokens) + " of position " + n(position_) + " + " + n(tokens) +
                        " new: every joined layer must see each forward");
  }
  position_ += tokens;
}

void KvCache::clear() {
  position_ = 0;
  for (at::Tensor& k : keys_) k = at::Tensor();
  for (at::Tensor& v : values_) v = at::Tensor();
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
