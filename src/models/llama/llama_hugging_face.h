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
//
// With MoE blocks (model.moe) it is Mixtral's MixtralForCausalLM layout,
// whose every layer is a mixture of experts with no shared expert and the
// top-k gates renormalised; each block's MLP maps as
//   blockN.mlp.router.weight            model.layers.N.block_sparse_moe.gate.weight
//   blockN.mlp.experts.J.gate.weight    model.layers.N.block_sparse_moe.experts.J.w1.weight
//   blockN.mlp.experts.J.down.weight    model.layers.N.block_sparse_moe.experts.J.w2.weight
//   blockN.mlp.experts.J.up.weight      model.layers.N.block_sparse_moe.experts.J.w3.weight
// The constructor throws ConfigError for an MoE model Mixtral's format cannot
// hold (dense blocks between MoE ones, shared experts, gates not
// renormalised), naming the setting.
#pragma once

#include "strata/models/hugging_face.h"
#include "strata/models/llama.h"

namespace strata::models {

class LlamaHuggingFace : public HuggingFaceLayout {
 public:
  explicit LlamaHuggingFace(LlamaConfig config);

  std::string architecture() const override {
    return config_.moe.enabled() ? "MixtralForCausalLM" : "LlamaForCausalLM";
  }
  std::vector<HuggingFaceTensor> tensors() const override;
  bool ignorable(const std::string& huggingFaceName) const override;
  at::Tensor toHuggingFace(const std::string& strataName, const at::Tensor& whole) const override;
  at::Tensor blockOf(const std::string& strataName, const at::Tensor& t,
                     const std::vector<int64_t>& offset,
                     const std::vector<int64_t>& length) const override;
  std::string configJson() const override;

 private:
  std::vector<HuggingFaceTensor> mlpTensors(const std::string& ours,
                                            const std::string& theirs) const;

  LlamaConfig config_;
};

}  // namespace strata::models
