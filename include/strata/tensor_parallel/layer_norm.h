// LayerNorm for tensor-parallel blocks: weight and bias [hidden] replicated.
//
// Without sequence parallel the input is replicated and so is every
// gradient. Under sequence parallel each rank normalises its own rows
// [s/p, b, hidden], so its weight and bias gradients are partial; they go
// through copyToTensorRegion, which sums them over tp in backward, so every
// rank ends with the serial gradient and replicas stay identical.
//
// Forward never communicates; backward under sequence parallel blocks in one
// all-reduce per parameter.
#pragma once

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>

#include <memory>

#include "strata/runtime/communicator.h"
#include "strata/tensor_parallel/sharding.h"

namespace strata::tensor_parallel {

class ParallelLayerNormImpl : public torch::nn::Module, public ShardedModule {
 public:
  ParallelLayerNormImpl(int64_t hidden, bool sequenceParallel, std::shared_ptr<Communicator> tp,
                        double eps = 1e-5);

  // x: [..., hidden] -> same shape.
  at::Tensor forward(const at::Tensor& x);
  int64_t shardDim(const std::string& name) const override { return kReplicated; }

  at::Tensor weight;  // [hidden], ones
  at::Tensor bias;    // [hidden], zeros

 private:
  int64_t hidden_;
  bool sequenceParallel_;
  double eps_;
  std::shared_ptr<Communicator> tp_;
};
TORCH_MODULE(ParallelLayerNorm);

}  // namespace strata::tensor_parallel
