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
// peftAdapterLayout() is a HuggingFaceLayout (models/hugging_face.h) over the
// adapters only, so the same export and import paths that move a model's
// weights move its adapters, into or out of any layout; its configJson()
// is adapter_config.json. Throws ConfigError for a spec without adapters
// or of a family without a Hugging Face layout. readAdapterConfig() throws
// ConfigError naming the file and the field for a config that is not
// PEFT's LoRA or does not match `lora` (rank, alpha, the targets). Nothing
// blocks but file reads.
#pragma once

#include <memory>
#include <string>

#include "strata/models/hugging_face.h"
#include "strata/models/model_family.h"

namespace strata::train {

constexpr const char* kPeftWeightsFile = "adapter_model.safetensors";
constexpr const char* kPeftConfigFile = "adapter_config.json";

std::unique_ptr<models::HuggingFaceLayout> peftAdapterLayout(const models::ModelSpec& spec);

// The adapters of PEFT's folder `dir`, as a LoraConfig (rank, alpha, Strata's
// target names); checked against `expected` when it is enabled.
tensor_parallel::LoraConfig readAdapterConfig(const std::string& dir,
                                              const tensor_parallel::LoraConfig& expected = {});

}  // namespace strata::train
