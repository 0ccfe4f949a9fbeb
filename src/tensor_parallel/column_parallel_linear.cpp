#include "strata/tensor_parallel/column_parallel_linear.h"

#include <torch/torch.h>

#include "collectives.h"
#include "strata/ops/linear.h"
#include "strata/tensor_parallel/comm_ops.h"

namespace strata::tensor_parallel {

ColumnParallelLinearImpl::ColumnParallelLinearImpl(const ColumnParallelLinearOptions& options,
                                                   std::shared_ptr<Communicator> tp)
    : options_(options),
      tp_(std::move(tp)),
      loraDropout_(options.lora.dropout, options.lora.dropoutSeed) {
  int parts = tp_->size();
  int64_t rows =
      options.padOutputToTp ? paddedToMultiple(options.outFeatures, parts) : options.outFeatures;
  detail::requireDivisible(rows, "ColumnParallelLinear output features", *tp_);
  // Serial weight [out, in] (zero rows appended up to `rows`); this rank
  // keeps rows [r*rows/p, (r+1)*rows/p).
  at::Tensor full = padRows(
      seededNormal({options.outFeatures, options.inFeatures}, deriveSeed(options.init.seed, 0),
                   options.init.weightStd, options.init.draw),
      rows);
  weight = register_parameter("weight", shardOf(full, 0, tp_->rank(), parts));
  if (options.bias) {
    at::Tensor fullBias =
        padRows(seededNormal({options.outFeatures}, deriveSeed(options.init.seed, 1),
                             options.init.biasStd, options.init.draw),
                rows);
    bias = register_parameter("bias", shardOf(fullBias, 0, tp_->rank(), parts));
  }
  if (options.lora.enabled()) {
    LoraWeights adapter =
        loraWeights(options.lora, options.inFeatures, options.outFeatures, options.init);
    loraA = register_parameter(kLoraA, adapter.a);
    loraB = register_parameter(kLoraB, shardOf(adapter.b, 0, tp_->rank(), parts));
    if (options.lora.dropout > 0) register_buffer("lora_dropout_calls", loraDropout_.callCounter());
  }
}

at::Tensor ColumnParallelLinearImpl::forward(const at::Tensor& x) {
  // x: [s, b, in] replicated, or [s/p, b, in] sequence-sharded.
  return forwardEntered(enterTensorRegion(x, options_.sequenceParallel, *tp_));
}

at::Tensor ColumnParallelLinearImpl::forwardEntered(const at::Tensor& entered) {
  at::Tensor y = ops::linear(entered, weight, bias);  // [s, b, out/p]
  // A's gradient from this rank's rows of B is partial: summed over tp.
  // The input is whole on every rank, and so is its dropout mask.
  if (loraA.defined())
    y = y + loraProduct(loraDropout_.replicated(entered, is_training()),
                        copyToTensorRegion(loraA, *tp_), loraB, options_.lora);
  return options_.gatherOutput ? gatherFromTensorRegion(y, *tp_) : y;
}

int64_t ColumnParallelLinearImpl::shardDim(const std::string& name) const {
  return name == kLoraA ? kReplicated : 0;
}

}  // namespace strata::tensor_parallel
