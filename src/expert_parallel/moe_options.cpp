#include "strata/expert_parallel/moe_options.h"

#include <string>

#include "strata/error.h"

namespace strata::expert_parallel {
namespace {

std::string n(int64_t value) { return std::to_string(value); }

}  // namespace

int64_t moeMlpParameters(const MoeOptions& moe, int64_t hidden, bool activeOnly) {
  int64_t experts = activeOnly ? moe.topK : moe.experts;
  return moe.experts * hidden + (experts + moe.sharedExperts) * 3 * hidden * moe.expertFfn;
}

void checkMoe(const MoeOptions& moe, int tp, int ep) {
  if (moe.experts <= 0)
    throw ConfigError("model.moe.experts must be positive, got " + n(moe.experts));
  if (moe.topK < 1 || moe.topK > moe.experts)
    throw ConfigError("model.moe.top_k " + n(moe.topK) + " must be between 1 and the " +
                      n(moe.experts) + " experts");
  if (moe.expertFfn <= 0)
    throw ConfigError("model.moe.expert_ffn must be positive, got " + n(moe.expertFfn));
  if (moe.expertFfn % tp != 0)
    throw ConfigError("model.moe.expert_ffn " + n(moe.expertFfn) + " is not divisible by tp " +
                      n(tp));
  if (moe.experts % ep != 0)
    throw ConfigError("model.moe.experts " + n(moe.experts) + " is not divisible by ep " + n(ep));
  if (moe.every < 1) throw ConfigError("model.moe.every must be at least 1, got " + n(moe.every));
  if (moe.sharedExperts < 0)
    throw ConfigError("model.moe.shared_experts must not be negative, got " + n(moe.sharedExperts));
  if (moe.auxLossCoeff < 0 || moe.zLossCoeff < 0)
    throw ConfigError("model.moe.aux_loss_coeff (" + std::to_string(moe.auxLossCoeff) +
                      ") and z_loss_coeff (" + std::to_string(moe.zLossCoeff) +
                      ") must not be negative");
  if (moe.capacityFactor < 0)
    throw ConfigError("model.moe.capacity_factor must not be negative (0: dropless), got " +
                      std::to_string(moe.capacityFactor));
}

void checkMoeBlocks(const MoeOptions& moe, int tp, bool sequenceParallel) {
  checkMoe(moe, tp, 1);
  if (sequenceParallel)
    throw ConfigError(
        "model.moe blocks route whole tokens and do not take sequence parallelism: "
        "set parallel.sequence_parallel = false");
}

}  // namespace strata::expert_parallel
