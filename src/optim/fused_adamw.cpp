#include "strata/optim/fused_adamw.h"

#include <torch/torch.h>

#include <memory>
#include <tuple>
#include <utility>

#include "strata/optim/adamw_update.h"
#include "strata/optim/optimizer_state_key.h"

namespace strata::optim {
namespace {

const torch::optim::AdamWOptions& adamwOptions(const torch::optim::OptimizerParamGroup& group) {
  return static_cast<const torch::optim::AdamWOptions&>(group.options());
}

bool anyAmsgrad(const std::vector<torch::optim::OptimizerParamGroup>& groups) {
  for (const auto& group : groups)
    if (adamwOptions(group).amsgrad()) return true;
  return false;
}

}  // namespace

at::Tensor FusedAdamW::step(LossClosure closure) {
  if (anyAmsgrad(param_groups_)) return torch::optim::AdamW::step(std::move(closure));
  at::Tensor loss;
  if (closure != nullptr) {
    at::AutoGradMode enableGrad(true);
    loss = closure();
  }
  update(1);
  return loss;
}

void FusedAdamW::stepOnScaledGradients(double scale) {
  if (anyAmsgrad(param_groups_)) {
    // LibTorch's own step reads the gradients: scale them first.
    torch::NoGradGuard noGrad;
    for (auto& group : param_groups_)
      for (at::Tensor& parameter : group.params())
        if (parameter.grad().defined()) parameter.mutable_grad().mul_(scale);
    torch::optim::AdamW::step();
    return;
  }
  update(scale);
}

void FusedAdamW::update(double gradScale) {
  torch::NoGradGuard noGrad;
  for (auto& group : param_groups_) {
    const torch::optim::AdamWOptions& options = adamwOptions(group);
    for (at::Tensor& parameter : group.params()) {
      const at::Tensor& grad = parameter.grad();
      if (!grad.defined()) continue;
      TORCH_CHECK(!grad.is_sparse(), "AdamW does not support sparse gradients");
      auto& slot = state_[optimizerStateKey(state_, parameter)];
      if (!slot) {
        auto fresh = std::make_unique<torch::optim::AdamWParamState>();
        fresh->step(0);
        fresh->exp_avg(torch::zeros_like(parameter, at::MemoryFormat::Preserve));
        fresh->exp_avg_sq(torch::zeros_like(parameter, at::MemoryFormat::Preserve));
        slot = std::move(fresh);
      }
      auto& state = static_cast<torch::optim::AdamWParamState&>(*slot);
      state.step(state.step() + 1);
      AdamWStep hyper{options.lr(),  std::get<0>(options.betas()), std::get<1>(options.betas()),
                      options.eps(), options.weight_decay(),       state.step(),
                      gradScale};
      adamwUpdate(parameter, grad, state.exp_avg(), state.exp_avg_sq(), hyper);
    }
  }
}

}  // namespace strata::optim
