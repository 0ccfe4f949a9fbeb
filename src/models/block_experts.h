// The expert-parallel object a family's MoE blocks share when the caller
// gives none: every expert on this rank, the routing statistics kept by the
// model. Nothing blocks.
#pragma once

#include <memory>

#include "strata/context_parallel/context_parallel.h"
#include "strata/expert_parallel/expert_parallel.h"
#include "strata/expert_parallel/moe_options.h"

namespace strata::models {

// `ep` itself, or for a model with MoE blocks and no `ep` a local one (its
// sequence group cp's, so the balance losses see whole sequences).
std::shared_ptr<expert_parallel::ExpertParallel> expertsOrLocal(
    const expert_parallel::MoeOptions& moe, std::shared_ptr<expert_parallel::ExpertParallel> ep,
    const std::shared_ptr<const context_parallel::ContextParallel>& cp);

}  // namespace strata::models
