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

}  // namespace

at::Tensor FusedAdamW::step(LossClosure closure) {
  for (const auto& group : param_groups_)
    if (adamwOptions(group).amsgrad()) return torch::optim::AdamW::step(std::move(closure));
  torch::NoGradGuard noGrad;
  at::Tensor loss;
  if (closure != nullptr) {
    at::AutoGradMode enableGrad(true);
    loss = closure();
  }
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
                      options.eps(), options.weight_decay(),       state.step()};
      adamwUpdate(parameter, grad, state.exp_avg(), state.exp_avg_sq(), hyper);
    }
  }
  return loss;
}

}  // namespace strata::optim
