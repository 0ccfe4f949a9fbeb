// LoRA adapters in PEFT's format (Hugging Face's parameter-efficient
// fine-tuning library), the format `PeftModel.from_pretrained` reads:
//
//   DIR/adapter_model.safetensors   base_model.model.<the base tensor's name
//                                   without ".weight">.lora_A.weight [r, in]
//                                   and .lora_B.weight [out, r]
//   DIR/adapter_config.json         peft_type LORA, task_type CAUSAL_LM, r,
//                                   lora_alpha, lora_dropout, target_modules
//                                   (q_proj, k_proj, v_proj, o_proj,
//                                   gate_proj, up_proj, down_proj), bias none
//
// e.g. Strata's block3.attention.q.lora_a is
// base_model.model.model.layers.3.self_attn.q_proj.lora_A.weight. A and B
// are stored as Strata holds them (Llama's projections are Hugging Face's
// as they are: rotary.h).
//
// A Mixtral's experts are one tensor per block in transformers
// (experts.gate_up_proj [E, 2F, H], experts.down_proj [E, H, F]), which PEFT
// adapts through target_parameters: one lora_A [r' E, in] and lora_B
// [out, r' E] per fused tensor, under ...mlp.experts (gate_up_proj's under
// ...mlp.experts.base_layer when down_proj is adapted too), expert e's A the
// rows [e r', e r' + r') and its B the columns k E + e. Strata's experts'
// gate and up adapters are written side by side in gate_up_proj at rank
// r' = 2r (rank_pattern and alpha_pattern say so, the scale alpha / r kept);
// one PEFT made at rank r shares its A between gate and up.
//
// peftAdapterLayout() is a HuggingFaceLayout (models/hugging_face.h) over the
// adapters only, so the same export and import paths that move a model's
// weights move its adapters, into or out of any layout; its configJson()
// is adapter_config.json. Throws ConfigError for a spec without adapters
// or of a family without a Hugging Face layout. readAdapterConfig() throws
// ConfigError naming the file and the field for a config that is not
// PEFT's LoRA or does not match `lora` (rank, alpha, the targets). Nothing
// blocks but file reads.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "strata/models/hugging_face.h"
#include "strata/models/model_family.h"

namespace strata::train {

constexpr const char* kPeftWeightsFile = "adapter_model.safetensors";
constexpr const char* kPeftConfigFile = "adapter_config.json";

// `gateUpRank`: the rank of the experts' gate_up_proj adapter to read
// (PeftAdapterConfig::gateUpRank); 0 for the one Strata writes.
std::unique_ptr<models::HuggingFaceLayout> peftAdapterLayout(const models::ModelSpec& spec,
                                                             int64_t gateUpRank = 0);

// The adapters of a whole model under PEFT's names, as export writes them:
// `parameter` gives a Strata parameter by name; the experts' adapters are
// assembled into PEFT's fused tensors.
std::vector<std::pair<std::string, at::Tensor>> peftAdapterTensors(
    const models::ModelSpec& spec, const std::function<at::Tensor(const std::string&)>& parameter);

struct PeftAdapterConfig {
  tensor_parallel::LoraConfig lora;  // rank, alpha, Strata's target names
  int64_t gateUpRank = 0;            // the experts' gate_up_proj adapter's: r or 2r
};

// The adapters of PEFT's folder `dir`; checked against `expected` when it
// is enabled.
PeftAdapterConfig readAdapterConfig(const std::string& dir,
                                    const tensor_parallel::LoraConfig& expected = {});

}  // namespace strata::train
