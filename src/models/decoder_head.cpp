#include "decoder_head.h"

#include <ATen/Dispatch.h>
#include <torch/torch.h>

#include <limits>

#include "strata/error.h"
#include "strata/tensor_parallel/comm_ops.h"
#include "strata/tensor_parallel/init.h"
#include "strata/tensor_parallel/vocab_parallel_linear_cross_entropy.h"

namespace strata::models {
namespace tp = strata::tensor_parallel;

DecoderHeadImpl::DecoderHeadImpl(const DecoderHeadOptions& options,
                                 std::shared_ptr<Communicator> tpComm,
                                 const tp::VocabParallelEmbedding& tiedTo)
    : options_(options), tp_(std::move(tpComm)) {
  if (options.rmsNorm) {
    rmsNorm = register_module("norm", tp::ParallelRMSNorm(options.hidden, options.normEps,
                                                          options.sequenceParallel, tp_));
  } else {
    layerNorm = register_module(
        "norm",
        tp::ParallelLayerNorm(options.hidden, options.sequenceParallel, tp_, options.normEps));
  }
  markPadding();
  if (tiedTo) {
    // The embedding's own tensor, registered here too so that the stage
    // holding the head trains it when the pipeline puts the embedding
    // elsewhere.
    tiedWeight = register_parameter("tied_weight", tiedTo->weight);  // [Vp/tp, hidden]
    return;
  }
  tp::ColumnParallelLinearOptions head;
  head.inFeatures = options.hidden;
  head.outFeatures = options.vocab;
  head.padOutputToTp = true;
  head.bias = false;
  head.sequenceParallel = options.sequenceParallel;
  head.init = options.init;
  lmHead = register_module("lm_head", tp::ColumnParallelLinear(head, tp_));
}

at::Tensor DecoderHeadImpl::norm(const at::Tensor& x) {
  return rmsNorm ? rmsNorm->forward(x) : layerNorm->forward(x);
}

at::Tensor DecoderHeadImpl::entered(const at::Tensor& h) {
  return tp::enterTensorRegion(h, options_.sequenceParallel, *tp_);
}

at::Tensor DecoderHeadImpl::forward(const at::Tensor& x) {
  at::Tensor h = norm(x);
  if (options_.fusedHeadLoss) return h;
  // Tied: the same column-parallel product with the embedding's slice.
  at::Tensor logits = lmHead ? lmHead->forward(h) : at::matmul(entered(h), tiedWeight.t());
  return maskPadding(logits);
}

at::Tensor DecoderHeadImpl::loss(const at::Tensor& normed, const at::Tensor& targets,
                                 const at::Tensor& tokenWeights) {
  if (!options_.fusedHeadLoss)
    throw ConfigError("the model's head was built without fusedHeadLoss");
  at::Tensor full = entered(normed);                         // [s, b, hidden]
  at::Tensor weight = lmHead ? lmHead->weight : tiedWeight;  // [Vp/tp, hidden]
  // Tokens in the [s, b] order of the hidden states.
  return tp::vocabParallelLinearCrossEntropy(
      full.reshape({-1, full.size(-1)}), weight, targets.t().reshape({-1}), options_.vocab, *tp_,
      {}, tokenWeights.defined() ? tokenWeights.t().reshape({-1}) : at::Tensor());
}

int64_t DecoderHeadImpl::shardDim(const std::string& name) const {
  return name == "tied_weight" ? 0 : tp::kReplicated;
}

int64_t DecoderHeadImpl::unpaddedSize(const std::string& name) const {
  return name == "tied_weight" ? options_.vocab : kNotPadded;
}

// Which of this rank's Vp/tp logits are padding (global index >= vocab).
void DecoderHeadImpl::markPadding() {
  int64_t shard = tp::paddedToMultiple(options_.vocab, tp_->size()) / tp_->size();
  int64_t first = shard * tp_->rank();
  at::Tensor global = torch::arange(first, first + shard, torch::kLong);
  if (first + shard > options_.vocab) padding_ = global >= options_.vocab;  // [Vp/tp]
}

// The lowest finite value of the logits' type (bfloat16's under bf16
// autocast: float's would overflow it) rather than -inf: exp() gives 0 all
// the same, and no inf - inf can turn into NaN in a loss.
at::Tensor DecoderHeadImpl::maskPadding(const at::Tensor& logits) const {
  if (!padding_.defined()) return logits;
  at::Scalar lowest;
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kBFloat16, at::kHalf, logits.scalar_type(), "maskPadding",
                                  [&] { lowest = std::numeric_limits<scalar_t>::lowest(); });
  return logits.masked_fill(padding_.to(logits.device()), lowest);
}

}  // namespace strata::models
