// Row-parallel linear layer: Y = XA + b with A split by rows and X by
// columns, A = [A_1; ...; A_p], X = [X_1 ... X_p]; Y = sum_r X_r A_r + b.
//
// Parameters (weight = A^T): weight [out, in/p] is columns
// [r*in/p, (r+1)*in/p) of the serial weight; bias [out] is replicated and
// added once, after the reduction.
//
// Input: [s, b, in/p] (inputIsParallel, the usual case after a
// column-parallel layer) or the full [s, b, in], which is split here.
// Output: [s, b, out] all-reduced, or [s/p, b, out] reduce-scattered along
// the sequence under sequence parallel (then the bias gradient, partial per
// sequence shard, is summed over tp in backward).
//
// The constructor throws ConfigError when in is not divisible by tp; forward
// throws ConfigError under sequence parallel when s is not divisible by tp,
// before communicating, and blocks in the tp collectives.
#pragma once

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>

#include <memory>

#include "strata/runtime/communicator.h"
#include "strata/tensor_parallel/dropout.h"
#include "strata/tensor_parallel/init.h"
#include "strata/tensor_parallel/lora.h"
#include "strata/tensor_parallel/sharding.h"

namespace strata::tensor_parallel {

struct RowParallelLinearOptions {
  int64_t inFeatures = 0;
  int64_t outFeatures = 0;
  bool bias = true;
  bool inputIsParallel = true;
  bool sequenceParallel = false;
  InitOptions init;
  // A LoRA adapter (lora.h): lora_a [r, in/p] split as the weight, lora_b [out, r] whole.
  LoraOptions lora;
};

class RowParallelLinearImpl : public torch::nn::Module, public ShardedModule {
 public:
  RowParallelLinearImpl(const RowParallelLinearOptions& options, std::shared_ptr<Communicator> tp);

  at::Tensor forward(const at::Tensor& x);
  // This rank's share of the product before any reduction: an input already
  // in the tp region [..., in/p] -> X_r W_r^T plus the adapter's partial
  // product, [..., out] (no bias). For callers that reduce several at once.
  at::Tensor partialForward(const at::Tensor& input);
  int64_t shardDim(const std::string& name) const override;
  const RowParallelLinearOptions& options() const { return options_; }

  at::Tensor weight;  // [out, in/p]
  at::Tensor bias;    // [out], undefined without bias
  at::Tensor loraA;   // [r, in/p], undefined without an adapter
  at::Tensor loraB;   // [out, r]

 private:
  RowParallelLinearOptions options_;
  std::shared_ptr<Communicator> tp_;
  SeededDropout loraDropout_;  // on the adapter's input (lora.h)
};
TORCH_MODULE(RowParallelLinear);

}  // namespace strata::tensor_parallel
