// RMSNorm for tensor-parallel blocks (the Llama family's norm):
//
//   y = x / sqrt(mean(x^2 over hidden) + eps) * weight,   weight [hidden] replicated
//
// The statistics are taken in float32 whatever the input's type (a bf16 sum
// of squares over thousands of features loses the small ones), and the
// normalised value goes back to the input's type before the weight scales it.
// Without sequence parallel every rank sees the same rows and computes the
// same gradient. Under sequence parallel each rank normalises its own rows
// [s/p, b, hidden]; the weight's gradient is then partial and goes through
// copyToTensorRegion, which sums it over tp in backward.
//
// Forward never communicates; backward under sequence parallel blocks in one
// all-reduce.
#pragma once

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>

#include <memory>

#include "strata/runtime/communicator.h"
#include "strata/tensor_parallel/sharding.h"

namespace strata::tensor_parallel {

class ParallelRMSNormImpl : public torch::nn::Module, public ShardedModule {
 public:
  ParallelRMSNormImpl(int64_t hidden, double eps, bool sequenceParallel,
                      std::shared_ptr<Communicator> tp);

  // x: [..., hidden] -> same shape and type.
  at::Tensor forward(const at::Tensor& x);
  int64_t shardDim(const std::string& name) const override { return kReplicated; }

  at::Tensor weight;  // [hidden], ones

 private:
  double eps_;
  bool sequenceParallel_;
  std::shared_ptr<Communicator> tp_;
};
TORCH_MODULE(ParallelRMSNorm);

}  // namespace strata::tensor_parallel
