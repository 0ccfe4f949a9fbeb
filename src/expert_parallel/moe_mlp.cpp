#include "strata/expert_parallel/moe_mlp.h"

#include <torch/torch.h>

#include "capacity.h"
#include "local_experts.h"
#include "router.h"
#include "routing_losses.h"
#include "strata/context_parallel/context_parallel.h"
#include "strata/tensor_parallel/comm_ops.h"
#include "token_exchange.h"

namespace strata::expert_parallel {
namespace tp = strata::tensor_parallel;
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// Passes y through; in backward gives `loss` the gradient `scale`, so a
// layer's routing losses join backward wherever the layer runs (any
// pipeline stage) with the weight of its micro-batch's loss.
struct AddLossGradient : torch::autograd::Function<AddLossGradient> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& y, const at::Tensor& loss,
                            double scale) {
    ctx->saved_data["scale"] = scale;
    return y;
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    double scale = ctx->saved_data["scale"].toDouble();
    return {grads[0], torch::full({}, scale, grads[0].options().dtype(torch::kFloat)),
            at::Tensor()};
  }
};

}  // namespace

MoeMlpImpl::MoeMlpImpl(const MoeMlpOptions& options, std::shared_ptr<Communicator> tpComm,
                       std::shared_ptr<ExpertParallel> ep)
    : options_(options), tp_(std::move(tpComm)), ep_(std::move(ep)) {
  const MoeOptions& moe = options.moe;
  checkMoe(moe, tp_->size(), ep_->size());
  router = register_module(
      "router",
      torch::nn::Linear(torch::nn::LinearOptions(options.hidden, moe.experts).bias(false)));
  if (options.init.draw) {
    torch::NoGradGuard noGrad;
    tp::InitOptions init = tp::deriveInit(options.init, 0);
    router->weight.copy_(
        tp::seededNormal({moe.experts, options.hidden}, init.seed, init.weightStd));
  }
  int64_t local = moe.experts / ep_->size();
  experts_ =
      register_module("experts", std::make_shared<detail::LocalExpertsImpl>(
                                     options.hidden, moe.expertFfn, ep_->rank() * local, local,
                                     tp::deriveInit(options.init, 100), options.lora, tp_));
  if (moe.sharedExperts > 0) {
    tp::SwiGluMlpOptions m;
    m.hidden = options.hidden;
    m.ffn = moe.sharedExperts * moe.expertFfn;
    m.init = tp::deriveInit(options.init, 1);
    m.lora = options.lora;
    shared = register_module("shared", tp::ParallelSwiGluMlp(m, tp_));
  }
}

at::Tensor MoeMlpImpl::chooseExperts(const at::Tensor& routed, int64_t s, int64_t b,
                                     int64_t& dropped) const {
  const MoeOptions& moe = options_.moe;
  dropped = 0;
  if (moe.capacityFactor <= 0) return routed;
  Communicator* cp = ep_->sequence();
  int cpSize = cp != nullptr ? cp->size() : 1;
  at::Tensor positions = cp != nullptr ? context_parallel::localPositions(s, *cp, routed.device())
                                       : torch::arange(s, routed.options());
  int64_t capacity = detail::expertCapacity(moe.capacityFactor, s * cpSize, moe.topK, moe.experts);
  at::Tensor accepted = detail::acceptedAssignments(routed.view({s, b, moe.topK}), positions,
                                                    capacity, moe.experts, cp)
                            .reshape({s * b, moe.topK});
  dropped = accepted.logical_not().sum().item<int64_t>();
  return routed.masked_fill(accepted.logical_not(), -1);
}

at::Tensor MoeMlpImpl::forward(const at::Tensor& x) {
  const MoeOptions& moe = options_.moe;
  int64_t s = x.size(0), b = x.size(1), hidden = x.size(2);
  at::Tensor tokens = x.reshape({s * b, hidden});  // token t = i b + j: sequence j
  detail::Routing routing = detail::route(tokens, router->weight, moe.topK, moe.normalizeTopK);
  int64_t dropped = 0;
  at::Tensor chosen = chooseExperts(routing.experts, s, b, dropped);  // [T, k], -1 dropped

  detail::TokenExchange exchange(chosen, moe.experts, hidden, *ep_);
  at::Tensor entered = tp::copyToTensorRegion(tokens, *tp_);
  at::Tensor partial = experts_->forward(exchange.dispatch(entered), exchange.rowsPerLocalExpert());
  at::Tensor outputs = tp::reduceFromTensorRegion(partial, *tp_);  // [N, hidden]
  at::Tensor y = exchange.combine(outputs, routing.weights).view({s, b, hidden});
  if (shared) y = y + shared(x);

  if (!is_training() || !torch::GradMode::is_enabled()) return y;
  detail::RoutingLosses losses = detail::routingLosses(routing, b, ep_->sequence());
  at::Tensor values = torch::stack({losses.balance, losses.z}).detach().to(at::kDouble).cpu();
  ep_->record(options_.block, exchange.sentPerExpert(), dropped, values[0].item<double>(),
              values[1].item<double>());  // one copy to the host for both
  at::Tensor trained = moe.auxLossCoeff * losses.balance + moe.zLossCoeff * losses.z;
  return AddLossGradient::apply(y, trained, ep_->lossScale());
}

}  // namespace strata::expert_parallel
