// Independent of Strata, for the Llama export tests: a Llama forward in
// plain LibTorch that follows Hugging Face's modeling_llama, reading its
// sizes from config.json and its weights under Hugging Face's names (read
// with the independent safetensors reader of independent_gpt2.h):
//
//   inv_freq = 1 / theta^(arange(0, d, 2) / d);  emb = cat(p inv_freq, p inv_freq)
//   rope(x)  = x cos(emb) + rotate_half(x) sin(emb), rotate_half = cat(-x2, x1)
//   k, v repeated num_attention_heads / num_key_value_heads times (repeat_kv)
//   RMSNorm  = weight * x rsqrt(mean(x^2) + eps); mlp = down(silu(gate x) * up x)
//   or, with num_local_experts in config.json (Mixtral), modeling_mixtral's
//   sparse block: softmax router, top k renormalised, experts w2(silu(w1 x) * w3 x)
//
// It calls none of Strata's code and throws std::runtime_error for what it
// cannot read.
#pragma once

#include <torch/torch.h>

#include <map>
#include <string>

#include "independent_gpt2.h"

namespace strata::train::testing {

// ids [b, s] int64 -> logits [b, s, vocab] of the model in `folder`
// (config.json and the weights `weights` read from it).
torch::Tensor huggingFaceLlamaLogits(const std::string& folder,
                                     const std::map<std::string, RawTensor>& weights,
                                     const torch::Tensor& ids);

}  // namespace strata::train::testing
