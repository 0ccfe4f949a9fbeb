// Strata's GPT of architecture gpt2 in the Hugging Face GPT-2 layout
// (GPT2LMHeadModel):
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
// saves it.
#pragma once

#include "strata/models/gpt.h"
#include "strata/models/hugging_face.h"

namespace strata::models {

class Gpt2HuggingFace : public HuggingFaceLayout {
 public:
  explicit Gpt2HuggingFace(GptConfig config) : config_(config) {}

  std::string architecture() const override { return "GPT2LMHeadModel"; }
  std::vector<HuggingFaceTensor> tensors() const override;
  bool ignorable(const std::string& huggingFaceName) const override;
  at::Tensor toHuggingFace(const std::string& strataName, const at::Tensor& whole) const override;
  at::Tensor blockOf(const std::string& strataName, const at::Tensor& t,
                     const std::vector<int64_t>& offset,
                     const std::vector<int64_t>& length) const override;
  std::string configJson() const override;

 private:
  GptConfig config_;
};

}  // namespace strata::models
