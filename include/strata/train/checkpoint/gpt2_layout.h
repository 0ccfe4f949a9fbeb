// Strata's GPT (architecture gpt2) in the Hugging Face GPT-2 layout: which
// Hugging Face tensor holds which Strata parameter, and how the two lay it out.
//
//   embedding.tokens.weight      [V, h]   transformer.wte.weight       same
//   embedding.positions          [C, h]   transformer.wpe.weight       same
//   blockN.ln1.weight / .bias    [h]      transformer.h.N.ln_1.*       same
//   blockN.attention.qkv.weight  [3h, h]  transformer.h.N.attn.c_attn.weight [h, 3h]
//   blockN.attention.qkv.bias    [3h]     transformer.h.N.attn.c_attn.bias   [3h]
//   blockN.attention.proj.*      [h, h]   transformer.h.N.attn.c_proj.*  weight transposed
//   blockN.ln2.*                 [h]      transformer.h.N.ln_2.*       same
//   blockN.mlp.fc1.*             [f, h]   transformer.h.N.mlp.c_fc.*   weight transposed [h, f]
//   blockN.mlp.fc2.*             [h, f]   transformer.h.N.mlp.c_proj.* weight transposed [f, h]
//   head.norm.weight / .bias     [h]      transformer.ln_f.*           same
//
// Hugging Face's Conv1D stores [in, out] (y = x W + b), Strata's linear layers
// [out, in] (y = x W^T + b), hence the transposes. Strata's fused QKV output
// features are head-major [heads, 3 (q, k, v), d] (so a tp rank holds whole
// heads); GPT-2's c_attn is [3 (q, k, v), heads, d] (q, k, v split in thirds).
// The head is tied to wte and has no tensor of its own, as GPT2LMHeadModel
// saves it. Pure tensor arithmetic: nothing blocks or throws.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>
#include <vector>

namespace strata::train {

// The model's sizes, as `[model]` in the training configuration has them.
struct Gpt2Dims {
  int64_t layers = 0, hidden = 0, heads = 0, ffn = 0, vocab = 0, context = 0;
};

struct Gpt2Tensor {
  std::string strata;          // "block0.attention.qkv.weight"
  std::string huggingFace;     // "transformer.h.0.attn.c_attn.weight"
  std::vector<int64_t> shape;  // Hugging Face's: [hidden, 3 x hidden]
};

// Every parameter of the model, in the model's order.
std::vector<Gpt2Tensor> gpt2Tensors(const Gpt2Dims& dims);

// A whole (unpadded) Strata parameter in Hugging Face's layout, contiguous.
at::Tensor toGpt2Layout(const std::string& strataName, const at::Tensor& t, int64_t heads);
// The inverse, for a block of the Strata parameter: the elements at
// `offset`, `length` (per dimension, in Strata's global layout) of Hugging
// Face tensor `t`, contiguous. Only the block's elements are read (for a
// tensor-parallel shard, a rank's slice), so `t` may view a mapped file.
// QKV rows are read by whole heads, as tp shards hold them (any other block
// reads all rows).
at::Tensor gpt2BlockOf(const std::string& strataName, const at::Tensor& t, int64_t heads,
                       const std::vector<int64_t>& offset, const std::vector<int64_t>& length);

}  // namespace strata::train
