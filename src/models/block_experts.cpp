#include "models/block_experts.h"

namespace strata::models {

std::shared_ptr<expert_parallel::ExpertParallel> expertsOrLocal(
    const expert_parallel::MoeOptions& moe, std::shared_ptr<expert_parallel::ExpertParallel> ep,
    const std::shared_ptr<const context_parallel::ContextParallel>& cp) {
  if (moe.enabled() && !ep)
    return std::make_shared<expert_parallel::ExpertParallel>(nullptr, cp ? cp->comm : nullptr);
  return ep;
}

}  // namespace strata::models
