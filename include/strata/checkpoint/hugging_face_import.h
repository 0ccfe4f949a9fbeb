// `strata train --init-from PATH`: a Hugging Face model's weights (GPT-2 or
// Llama-family, as models/hugging_face.h lays them out) into one rank's
// parameters, in any layout. PATH is a .safetensors file, a sharded model's
// model.safetensors.index.json, or a directory holding either
// (formats/safetensors_set.h). Files are mapped read-only; each parameter
// takes only its tensor-parallel slice of its tensor, and a rank only the
// tensors of its pipeline stage, so no rank copies the whole model.
// float32, bfloat16 and float16 files load (converted to float32).
//
// The whole model is checked against the files before any tensor is
// copied, so every rank of a job decides alike. Throws SafetensorsError
// naming the file and the tensor when a tensor of the model is missing, has
// another shape (naming both) or another dtype, when the files hold a
// tensor the model has no place for, or when a header or the index is
// corrupt. Nothing blocks but the files' page faults.
#pragma once

#include <string>

#include "strata/checkpoint/checkpoint.h"
#include "strata/models/hugging_face.h"

namespace strata::train {

// Which of a rank's parameters the files hold: the model's (every one but
// LoRA adapters, which keep their values), or the adapters alone (PEFT's
// files, peft_adapter.h).
enum class WeightsOf { kModel, kAdapters };

// Fills `state.parameters` (float32) at `state.tpRank` from the weights at
// `path`, laid out as `layout` says.
void loadHuggingFaceWeights(const std::string& path, const RankState& state,
                            const models::HuggingFaceLayout& layout,
                            WeightsOf weights = WeightsOf::kModel);

}  // namespace strata::train
