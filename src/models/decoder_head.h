// The language-model head every decoder family ends with: a final norm, then
// logits Y = X W^T with W [Vp, hidden] split by rows (the padded vocabulary)
// over tp, so the logits stay split: [s, b, Vp/tp]. W is the head's own
// (column-parallel "lm_head") or, tied, the token embedding's tensor
// registered again as "tied_weight" (models/gpt.h says how the trainer keeps
// the two copies equal across a pipeline). The norm is the family's:
// LayerNorm (GPT) or RMSNorm (Llama), registered as "norm" either way.
//
// Padding logits (global index >= vocab) are set to the lowest finite value
// of their type, so softmax and the loss see the serial vocabulary.
// Under fusedHeadLoss forward returns the normed input and loss() takes the
// product and the cross-entropy together, chunk by chunk
// (vocab_parallel_linear_cross_entropy.h).
//
// Forward and loss() block in the tp collectives; loss() throws ConfigError
// on a head built without fusedHeadLoss.
#pragma once

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>

#include <memory>

#include "strata/runtime/communicator.h"
#include "strata/tensor_parallel/column_parallel_linear.h"
#include "strata/tensor_parallel/layer_norm.h"
#include "strata/tensor_parallel/rms_norm.h"
#include "strata/tensor_parallel/sharding.h"
#include "strata/tensor_parallel/vocab_parallel_embedding.h"

namespace strata::models {

struct DecoderHeadOptions {
  int64_t hidden = 0;
  int64_t vocab = 0;
  bool rmsNorm = false;  // RMSNorm (with normEps) instead of LayerNorm
  double normEps = 1e-5;
  bool sequenceParallel = false;
  bool fusedHeadLoss = false;
  tensor_parallel::InitOptions init;  // the untied head's weight
};

class DecoderHeadImpl : public torch::nn::Module, public tensor_parallel::ShardedModule {
 public:
  // `tiedTo` is the token embedding the head shares its weight with, or
  // nullptr for a head of its own.
  DecoderHeadImpl(const DecoderHeadOptions& options, std::shared_ptr<Communicator> tp,
                  const tensor_parallel::VocabParallelEmbedding& tiedTo);

  // x [s, b, hidden] ([s/tp, b, hidden] under sequence parallel) -> logits
  // [s, b, Vp/tp], or under fusedHeadLoss the normed x.
  at::Tensor forward(const at::Tensor& x);
  // Under fusedHeadLoss: the mean cross-entropy of forward()'s output
  // against targets [b, s].
  // tokenWeights: [b, s] float32 or undefined (the mean), as
  // vocabParallelLinearCrossEntropy takes them.
  at::Tensor loss(const at::Tensor& normed, const at::Tensor& targets,
                  const at::Tensor& tokenWeights = {});
  bool fusedLoss() const { return options_.fusedHeadLoss; }
  Communicator& tp() const { return *tp_; }

  int64_t shardDim(const std::string& name) const override;
  int64_t unpaddedSize(const std::string& name) const override;

  tensor_parallel::ParallelLayerNorm layerNorm{nullptr};  // GPT
  tensor_parallel::ParallelRMSNorm rmsNorm{nullptr};      // Llama
  tensor_parallel::ColumnParallelLinear lmHead{nullptr};
  at::Tensor tiedWeight;  // undefined unless tied

 private:
  at::Tensor norm(const at::Tensor& x);
  // The replicated [s, b, hidden] the head's product needs.
  at::Tensor entered(const at::Tensor& h);
  void markPadding();
  at::Tensor maskPadding(const at::Tensor& logits) const;

  DecoderHeadOptions options_;
  std::shared_ptr<Communicator> tp_;
  at::Tensor padding_;  // undefined when this rank holds no padding
};
TORCH_MODULE(DecoderHead);

}  // namespace strata::models
