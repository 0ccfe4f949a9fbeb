// Internal: ModelDesc::validate()'s check of the LoRA description.
#pragma once

#include "strata/plan/model_desc.h"

namespace strata::plan {

// Throws PlanError for LoRA that strata train refuses (validate_config.cpp):
// on a GPT, a rank below 1, no targets, MLP targets on an MoE model.
void validateLora(const ModelDesc& m);

}  // namespace strata::plan
