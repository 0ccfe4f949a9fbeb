// Vocab-parallel embedding: rank r holds rows [r*V/p, (r+1)*V/p) of the
// serial table E [V, hidden]. Each rank looks up the ids in its range, writes
// zeros for the others, and the partial results are summed over tp:
//   Y = sum_r mask_r(ids) * E_r[ids - r*V/p].
//
// Input ids [s, b] (int64, replicated). Output [s, b, hidden] all-reduced, or
// [s/p, b, hidden] reduce-scattered under sequence parallel.
//
// The constructor throws ConfigError when the vocabulary is not divisible by
// tp (pad the vocabulary to a multiple of tp); forward throws ConfigError
// under sequence parallel when s is not divisible by tp, before
// communicating, and blocks in the tp collectives.
#pragma once

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>

#include <memory>

#include "strata/runtime/communicator.h"
#include "strata/tensor_parallel/init.h"
#include "strata/tensor_parallel/sharding.h"

namespace strata::tensor_parallel {

struct VocabParallelEmbeddingOptions {
  int64_t vocab = 0;
  int64_t hidden = 0;
  bool sequenceParallel = false;
  InitOptions init;
};

class VocabParallelEmbeddingImpl : public torch::nn::Module, public ShardedModule {
 public:
  VocabParallelEmbeddingImpl(const VocabParallelEmbeddingOptions& options,
                             std::shared_ptr<Communicator> tp);

  at::Tensor forward(const at::Tensor& ids);
  int64_t shardDim(const std::string& name) const override { return 0; }

  at::Tensor weight;  // [V/p, hidden]

 private:
  VocabParallelEmbeddingOptions options_;
  std::shared_ptr<Communicator> tp_;
};
TORCH_MODULE(VocabParallelEmbedding);

}  // namespace strata::tensor_parallel
