// Independent of Strata, for the export tests: a reader of the safetensors
// format written from its definition (8-byte little-endian header length,
// a JSON header, raw little-endian data) and a GPT-2 forward in plain
// LibTorch written from GPT-2's definition (Hugging Face's modeling_gpt2):
//
//   x = wte[ids] + wpe[0..s)
//   per block: a = LN(x; ln_1); q|k|v = a c_attn.weight + c_attn.bias (thirds)
//              x += softmax(q k^T / sqrt(d), causal) v  c_proj.weight + bias
//              x += gelu_new(LN(x; ln_2) c_fc.weight + b) c_proj.weight + b
//   logits = LN(x; ln_f) wte^T
//
// gelu_new(x) = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))). Neither calls
// any of Strata's code; they throw std::runtime_error on what they cannot read.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace strata::train::testing {

struct RawTensor {
  std::string dtype;
  std::vector<int64_t> shape;
  torch::Tensor value;  // float32, decoded byte by byte (F32 only)
};

struct RawSafetensors {
  std::map<std::string, RawTensor> tensors;
  std::map<std::string, std::string> metadata;
};

RawSafetensors readSafetensorsIndependently(const std::string& path);

// ids [b, s] int64 -> logits [b, s, vocab].
torch::Tensor gpt2Logits(const std::map<std::string, RawTensor>& weights, int64_t layers,
                         int64_t heads, const torch::Tensor& ids);

}  // namespace strata::train::testing
