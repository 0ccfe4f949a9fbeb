#include "strata/tensor_parallel/parallel_attention.h"

#include <torch/torch.h>

#include "collectives.h"
#include "context_parallel/causal_attention.h"
#include "strata/context_parallel/all_to_all_attention.h"
#include "strata/error.h"
#include "strata/ops/causal_self_attention.h"

namespace strata::tensor_parallel {
namespace {

// Checks every size before any layer is built, so every rank throws alike.
void checkSizes(const ParallelSelfAttentionOptions& options, const Communicator& tp) {
  if (options.heads <= 0 || options.hidden % options.heads != 0) {
    throw ConfigError("ParallelSelfAttention hidden size " + std::to_string(options.hidden) +
                      " is not divisible by the number of heads " + std::to_string(options.heads));
  }
  detail::requireDivisible(options.heads, "ParallelSelfAttention number of heads", tp);
  detail::requireDivisible(options.hidden, "ParallelSelfAttention hidden size", tp);
  const context_parallel::ContextParallel* cp = options.contextParallel.get();
  if (!cp || cp->comm->size() == 1) return;
  if (options.attentionDropout > 0)
    throw ConfigError("attention dropout " + std::to_string(options.attentionDropout) +
                      " under context parallelism: its masks would not be those of the whole "
                      "sequence; set dropout to 0 with cp > 1");
  if (cp->algorithm == context_parallel::CpAlgorithm::kAllToAll) {
    int64_t heads = options.heads / tp.size();
    context_parallel::checkAllToAllHeads(heads, heads, cp->comm->size());
  }
}

}  // namespace

ParallelSelfAttentionImpl::ParallelSelfAttentionImpl(const ParallelSelfAttentionOptions& options,
                                                     std::shared_ptr<Communicator> tp)
    : localHeads_((checkSizes(options, *tp), options.heads / tp->size())),
      headDim_(options.hidden / options.heads),
      firstHead_(localHeads_ * tp->rank()),
      tpSize_(tp->size()),
      sequenceParallel_(options.sequenceParallel),
      dropout_(options.attentionDropout, deriveSeed(options.init.seed, 2)),
      cp_(options.contextParallel),
      documents_(options.documents) {
  register_buffer("dropout_calls", dropout_.callCounter());
  ColumnParallelLinearOptions fused;
  fused.inFeatures = options.hidden;
  fused.outFeatures = 3 * options.hidden;
  fused.sequenceParallel = options.sequenceParallel;
  fused.init = deriveInit(options.init, 0);
  RowParallelLinearOptions out;
  out.inFeatures = options.hidden;
  out.outFeatures = options.hidden;
  out.sequenceParallel = options.sequenceParallel;
  out.init = deriveInit(options.init, 1);
  qkv = register_module("qkv", ColumnParallelLinear(fused, tp));
  proj = register_module("proj", RowParallelLinear(out, tp));
}

at::Tensor ParallelSelfAttentionImpl::forward(const at::Tensor& x) {
  at::Tensor fused = qkv(x);  // [s, b, 3h/p], features [H/p, 3, d]
  at::Tensor segments = documents_ ? documents_->segments() : at::Tensor();  // [b, S]
  if (!segments.defined() && attendsFused(fused))
    return proj(ops::causalSelfAttention(fused, localHeads_));
  int64_t s = fused.size(0);
  int64_t b = fused.size(1);
  // unbind, not three selects: backward stacks the three gradients once
  // instead of zero-filling the whole fused gradient three times and adding.
  std::vector<at::Tensor> qkvHeads =
      fused.view({s, b, localHeads_, 3, headDim_}).permute({3, 1, 2, 0, 4}).unbind(0);
  at::Tensor heads = attend(qkvHeads[0], qkvHeads[1], qkvHeads[2], segments);  // [b, H/p, s, d]
  at::Tensor merged = heads.permute({2, 0, 1, 3}).reshape({s, b, localHeads_ * headDim_});
  return proj(merged);
}

bool ParallelSelfAttentionImpl::attendsFused(const at::Tensor& fused) const {
  bool wholeSequences = !cp_ || cp_->comm->size() == 1;
  bool noDropout = !is_training() || dropout_.p() == 0.0;
  return !cache_.joined() && wholeSequences && noDropout && ops::causalSelfAttentionUsesBlas(fused);
}

at::Tensor ParallelSelfAttentionImpl::attend(const at::Tensor& q, const at::Tensor& k,
                                             const at::Tensor& v, const at::Tensor& segments) {
  if (cache_.joined()) return cache_.attend(q, k, v, is_training());
  // The fused kernel (causalAttention) draws no masks of its own here; with
  // dropout, Strata's seeded masks (reproducible across tp degrees) apply to
  // the probabilities themselves.
  if (!is_training() || dropout_.p() == 0.0)
    return context_parallel::causalAttention(q, k, v, cp_.get(), segments);
  at::Tensor probs =
      context_parallel::detail::causalProbabilities(q, k, segments);  // [b, H/p, s, s]
  probs = dropout_.unitSharded(probs, 1, firstHead_, is_training());
  return at::matmul(probs, v);
}

void ParallelSelfAttentionImpl::decodeWith(std::shared_ptr<KvCache> cache) {
  cache_.join(std::move(cache), tpSize_, cp_ != nullptr, sequenceParallel_);
}

}  // namespace strata::tensor_parallel
