#include "strata/tensor_parallel/vocab_parallel_embedding.h"

#include <torch/torch.h>

#include "collectives.h"
#include "strata/error.h"
#include "strata/tensor_parallel/comm_ops.h"

namespace strata::tensor_parallel {

VocabParallelEmbeddingImpl::VocabParallelEmbeddingImpl(const VocabParallelEmbeddingOptions& options,
                                                       std::shared_ptr<Communicator> tp)
    : options_(options), tp_(std::move(tp)) {
  at::Tensor full =
      padRows(seededNormal({options.vocab, options.hidden}, deriveSeed(options.init.seed, 0),
                           options.init.weightStd, options.init.draw),
              paddedToMultiple(options.vocab, tp_->size()));
  weight = register_parameter("weight", shardOf(full, 0, tp_->rank(), tp_->size()));
}

at::Tensor VocabParallelEmbeddingImpl::forward(const at::Tensor& ids) {
  // ids: [s, b] in [0, V), the same on every rank.
  if (ids.numel() > 0 &&
      (ids.min().item<int64_t>() < 0 || ids.max().item<int64_t>() >= options_.vocab)) {
    throw ConfigError("VocabParallelEmbedding got token ids outside [0, " +
                      std::to_string(options_.vocab) + ")");
  }
  if (options_.sequenceParallel) {
    detail::requireDivisible(ids.size(0), "sequence length (dimension 0)", *tp_);
  }
  int64_t rows = weight.size(0);
  int64_t first = rows * tp_->rank();
  at::Tensor outside = (ids < first).logical_or(ids >= first + rows);  // [s, b]
  at::Tensor local = (ids - first).masked_fill(outside, 0);
  at::Tensor partial = at::embedding(weight, local).masked_fill(outside.unsqueeze(-1), 0.0);
  return options_.sequenceParallel ? reduceScatterToSequenceRegion(partial, *tp_)
                                   : reduceFromTensorRegion(partial, *tp_);
}

}  // namespace strata::tensor_parallel
