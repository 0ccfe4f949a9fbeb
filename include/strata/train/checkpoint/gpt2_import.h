// `strata train --init-from model.safetensors`: a GPT-2 safetensors file
// (the Hugging Face layout, gpt2_layout.h) into one rank's parameters, in
// any layout. The file is mapped read-only; each parameter takes only its
// tensor-parallel slice of its tensor, and a rank only the tensors of its
// pipeline stage, so no rank copies the whole model.
//
// The whole file is checked against the whole model before any tensor is
// copied, so every rank of a job decides alike. Throws SafetensorsError
// naming the file and the tensor when a tensor of the model is missing, has
// another shape (naming both) or a dtype other than F32, when the file holds
// a tensor the model has no place for, or when its header is corrupt.
// Nothing blocks but the file's page faults.
#pragma once

#include <cstdint>
#include <string>

#include "strata/train/checkpoint/checkpoint.h"
#include "strata/train/checkpoint/gpt2_layout.h"

namespace strata::train {

// Fills `state.parameters` (float32) at `state.tpRank`, of a model of `dims`.
void loadGpt2Safetensors(const std::string& path, const RankState& state, const Gpt2Dims& dims);

}  // namespace strata::train
