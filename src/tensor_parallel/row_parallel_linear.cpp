#include "strata/tensor_parallel/row_parallel_linear.h"

#include <torch/torch.h>

#include "collectives.h"
#include "strata/ops/linear.h"
#include "strata/tensor_parallel/comm_ops.h"

namespace strata::tensor_parallel {

RowParallelLinearImpl::RowParallelLinearImpl(const RowParallelLinearOptions& options,
                                             std::shared_ptr<Communicator> tp)
    : options_(options),
      tp_(std::move(tp)),
      loraDropout_(options.lora.dropout, options.lora.dropoutSeed) {
  detail::requireDivisible(options.inFeatures, "RowParallelLinear input features", *tp_);
  // Serial weight [out, in]; this rank keeps columns [r*in/p, (r+1)*in/p).
  at::Tensor full =
      seededNormal({options.outFeatures, options.inFeatures}, deriveSeed(options.init.seed, 0),
                   options.init.weightStd, options.init.draw);
  weight = register_parameter("weight", shardOf(full, 1, tp_->rank(), tp_->size()));
  if (options.bias) {
    bias = register_parameter("bias",
                              seededNormal({options.outFeatures}, deriveSeed(options.init.seed, 1),
                                           options.init.biasStd, options.init.draw));
  }
  if (options.lora.enabled()) {
    LoraWeights adapter =
        loraWeights(options.lora, options.inFeatures, options.outFeatures, options.init);
    loraA = register_parameter(kLoraA, shardOf(adapter.a, 1, tp_->rank(), tp_->size()));
    loraB = register_parameter(kLoraB, adapter.b);
    if (options.lora.dropout > 0) register_buffer("lora_dropout_calls", loraDropout_.callCounter());
  }
}

at::Tensor RowParallelLinearImpl::partialForward(const at::Tensor& input) {
  at::Tensor partial = ops::linear(input, weight);  // [..., out], X_r A_r
  if (!loraA.defined()) return partial;
  // The adapter's partial product joins the weight's before the one
  // reduction; B's gradient on each rank is partial: summed over tp. Its
  // dropout mask is the rank's columns of the whole input's.
  int64_t last = input.dim() - 1, columns = input.size(last);
  at::Tensor dropped =
      loraDropout_.sliced(input, last, tp_->rank() * columns, tp_->size() * columns, is_training());
  return partial + loraProduct(dropped, loraA, copyToTensorRegion(loraB, *tp_), options_.lora);
}

at::Tensor RowParallelLinearImpl::forward(const at::Tensor& x) {
  at::Tensor input = options_.inputIsParallel ? x : scatterToTensorRegion(x, *tp_);
  at::Tensor partial = partialForward(input);  // [s, b, out]
  if (!options_.sequenceParallel) {
    at::Tensor y = reduceFromTensorRegion(partial, *tp_);  // sum_r X_r A_r
    return options_.bias ? y + bias : y;
  }
  at::Tensor y = reduceScatterToSequenceRegion(partial, *tp_);  // [s/p, b, out]
  // Each rank adds the bias to its own rows only, so its bias gradient is
  // partial: copyToTensorRegion sums it over tp in backward.
  return options_.bias ? y + copyToTensorRegion(bias, *tp_) : y;
}

int64_t RowParallelLinearImpl::shardDim(const std::string& name) const {
  return name == "weight" || name == kLoraA ? 1 : kReplicated;
}

}  // namespace strata::tensor_parallel
