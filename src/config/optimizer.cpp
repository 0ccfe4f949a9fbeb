#include "strata/config/optimizer.h"

#include <torch/torch.h>

#include "strata/optim/fused_adamw.h"

namespace strata::train {

std::unique_ptr<optim::FusedAdamW> makeAdamW(const std::vector<at::Tensor>& parameters,
                                             const OptimConfig& config) {
  auto options = [&](double decay) {
    return std::make_unique<torch::optim::AdamWOptions>(torch::optim::AdamWOptions(config.lr)
                                                            .betas({config.beta1, config.beta2})
                                                            .eps(config.eps)
                                                            .weight_decay(decay));
  };
  std::vector<at::Tensor> decayed, plain;
  for (const at::Tensor& parameter : parameters)
    (parameter.dim() >= 2 ? decayed : plain).push_back(parameter);
  std::vector<torch::optim::OptimizerParamGroup> groups;
  groups.emplace_back(decayed, options(config.weightDecay));
  groups.emplace_back(plain, options(0.0));
  return std::make_unique<optim::FusedAdamW>(std::move(groups),
                                             torch::optim::AdamWOptions(config.lr));
}

}  // namespace strata::train
