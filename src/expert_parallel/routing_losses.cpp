#include "routing_losses.h"

#include <torch/torch.h>

namespace strata::expert_parallel::detail {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// Sum over a group whose every member computes the same function of the
// sum: backward multiplies by the group's size instead of all-reducing
// gradients that are equal on every member anyway.
struct SumOverGroup : torch::autograd::Function<SumOverGroup> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, Communicator* group) {
    ctx->saved_data["size"] = static_cast<int64_t>(group->size());
    at::Tensor sum = x.clone();
    group->allReduce(sum);
    return sum;
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    return {grads[0] * static_cast<double>(ctx->saved_data["size"].toInt()), at::Tensor()};
  }
};

}  // namespace

RoutingLosses routingLosses(const Routing& routing, int64_t sequences, Communicator* cp) {
  int64_t tokens = routing.probabilities.size(0), experts = routing.probabilities.size(1);
  int64_t topK = routing.experts.size(1);
  auto device = routing.probabilities.device();
  at::Tensor sequenceOf = torch::arange(tokens, torch::TensorOptions(torch::kLong).device(device))
                              .remainder(sequences);  // [T]
  // chosen[j, e]: assignments of sequence j's tokens to expert e.
  at::Tensor chosen = torch::zeros({sequences, experts}, routing.probabilities.options());
  chosen.index_put_({sequenceOf.repeat_interleave(topK), routing.experts.flatten()},
                    torch::ones({tokens * topK}, chosen.options()), /*accumulate=*/true);
  // probabilitySum[j, e]: expert e's gate probability summed over sequence j.
  at::Tensor probabilitySum = torch::zeros({sequences, experts}, routing.probabilities.options())
                                  .index_add(0, sequenceOf, routing.probabilities);
  double length = static_cast<double>(tokens / sequences);
  if (cp != nullptr && cp->size() > 1) {
    cp->allReduce(chosen);
    probabilitySum = SumOverGroup::apply(probabilitySum, cp);
    length *= cp->size();
  }
  at::Tensor fraction = chosen * (static_cast<double>(experts) / (topK * length));  // f [b, E]
  at::Tensor meanProbability = probabilitySum / length;                             // P [b, E]
  RoutingLosses losses;
  losses.balance = (fraction * meanProbability).sum(-1).mean();
  losses.z = at::logsumexp(routing.logits, -1).pow(2).mean();
  return losses;
}

}  // namespace strata::expert_parallel::detail
