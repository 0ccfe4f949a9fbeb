#include "router.h"

#include <ATen/ATen.h>
#include <c10/core/impl/LocalDispatchKeySet.h>

namespace strata::expert_parallel::detail {

Routing route(const at::Tensor& tokens, const at::Tensor& weight, int64_t topK,
              bool normalizeTopK) {
  Routing r;
  {
    // A bf16 router flips near-tied choices between layouts: score in float32.
    c10::impl::ExcludeDispatchKeyGuard noAutocast(c10::autocast_dispatch_keyset);
    r.logits = at::matmul(tokens.to(at::kFloat), weight.to(at::kFloat).t());  // [T, E]
  }
  r.probabilities = at::softmax(r.logits, -1);
  at::Tensor order = std::get<1>(
      at::sort(r.probabilities.detach(), /*stable=*/true, /*dim=*/-1, /*descending=*/true));
  r.experts = order.narrow(-1, 0, topK).contiguous();  // [T, k]
  r.weights = r.probabilities.gather(-1, r.experts);   // [T, k]
  if (normalizeTopK) r.weights = r.weights / r.weights.sum(-1, /*keepdim=*/true);
  return r;
}

}  // namespace strata::expert_parallel::detail
