// The logits of the token after a growing sequence, as `strata generate`
// samples it: the model sees the sequence's last `context` tokens (all of
// them while it is shorter).
//
// With a KV cache (tensor_parallel/kv_cache.h) each call feeds the model
// only the tokens it has not seen, a token a call once the prompt is in.
// Past the context the window moves by a token a call and every token's
// position changes with it, so the cache starts again from the window: a
// forward of the whole window a token, as without the cache. Either way
// the logits are those of the window in one forward.
//
// The model is one process's (tp 1, no cp), in eval mode. operator() runs
// the forward: nothing blocks or communicates.
#pragma once

#include <ATen/core/Tensor.h>
#include <torch/nn/modules/container/sequential.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "strata/tensor_parallel/kv_cache.h"

namespace strata::train {

class NextTokenLogits {
 public:
  // Throws ConfigError when `kvCache` and the model has a layer that cannot
  // decode incrementally (kv_cache.h), or no attention layer that can.
  NextTokenLogits(torch::nn::Sequential model, int64_t context, bool kvCache);
  // The model's layers take whole sequences again.
  ~NextTokenLogits();
  NextTokenLogits(const NextTokenLogits&) = delete;
  NextTokenLogits& operator=(const NextTokenLogits&) = delete;

  // ids: the sequence so far, at least one token; the same sequence grown
  // between calls. -> logits [vocab] of the token after it.
  at::Tensor operator()(const std::vector<int64_t>& ids);

 private:
  at::Tensor lastLogits(const std::vector<int64_t>& ids, int64_t from);

  torch::nn::Sequential model_;
  int64_t context_;
  std::shared_ptr<tensor_parallel::KvCache> cache_;  // nullptr: the whole window each call
  int64_t cacheStart_ = 0;                           // the cache's first token in ids
};

}  // namespace strata::train
