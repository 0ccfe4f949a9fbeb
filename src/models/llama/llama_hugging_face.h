// Strata's Llama in Hugging Face's LlamaForCausalLM layout. Every tensor
// keeps its layout ([out, in] linear weights; q_proj and k_proj rows in the
// half-split rotary order that both use, tensor_parallel/rotary.h), so the
// map is names only:
//
//   embedding.tokens.weight             model.embed_tokens.weight
//   blockN.attention_norm.weight        model.layers.N.input_layernorm.weight
//   blockN.attention.{q,k,v,o}.weight   model.layers.N.self_attn.{q,k,v,o}_proj.weight
//   blockN.mlp_norm.weight              model.layers.N.post_attention_layernorm.weight
//   blockN.mlp.{gate,up,down}.weight    model.layers.N.mlp.{gate,up,down}_proj.weight
//   head.norm.weight                    model.norm.weight
//   head.lm_head.weight                 lm_head.weight (absent when tied)
#pragma once

#include "strata/models/hugging_face.h"
#include "strata/models/llama.h"

namespace strata::models {

class LlamaHuggingFace : public HuggingFaceLayout {
 public:
  explicit LlamaHuggingFace(LlamaConfig config) : config_(config) {}

  std::string architecture() const override { return "LlamaForCausalLM"; }
  std::vector<HuggingFaceTensor> tensors() const override;
  bool ignorable(const std::string& huggingFaceName) const override;
  at::Tensor toHuggingFace(const std::string& strataName, const at::Tensor& whole) const override;
  at::Tensor blockOf(const std::string& strataName, const at::Tensor& t,
                     const std::vector<int64_t>& offset,
                     const std::vector<int64_t>& length) const override;
  std::string configJson() const override;

 private:
  LlamaConfig config_;
};

}  // namespace strata::models
