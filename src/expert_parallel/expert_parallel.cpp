#include "strata/expert_parallel/expert_parallel.h"

namespace strata::expert_parallel {

bool isExpertParameter(const std::string& name) {
  return name.rfind("experts.", 0) == 0 || name.find(".experts.") != std::string::npos;
}

void ExpertParallel::record(int64_t block, const at::Tensor& tokensPerExpert, int64_t dropped,
                            double auxLoss, double zLoss) {
  MoeLayerStats& layer = stats_[block];
  at::Tensor counts = tokensPerExpert.to(at::kLong).cpu();
  layer.tokensPerExpert =
      layer.tokensPerExpert.defined() ? layer.tokensPerExpert + counts : counts.clone();
  layer.dropped += dropped;
  layer.auxLoss += auxLoss;
  layer.zLoss += zLoss;
  ++layer.passes;
}

double ExpertParallel::takeExchangeSeconds() {
  double seconds = exchangeSeconds_;
  exchangeSeconds_ = 0;
  return seconds;
}

std::map<int64_t, MoeLayerStats> ExpertParallel::takeStats() {
  std::map<int64_t, MoeLayerStats> taken;
  taken.swap(stats_);
  return taken;
}

}  // namespace strata::expert_parallel
