// Vocab-parallel embedding: rank r holds rows [r*Vp/p, (r+1)*Vp/p) of the
// serial table E [V, hidden] padded with zero rows to Vp = V rounded up to a
// multiple of tp (no id selects a padding row, so the output is the serial
// layer's). Each rank looks up the ids in its range, writes zeros for the
// others, and the partial results are summed over tp:
//   Y = sum_r mask_r(ids) * E_r[ids - r*Vp/p].
//
// Input ids [s, b] (int64 in [0, V), replicated). Output [s, b, hidden]
// all-reduced, or [s/p, b, hidden] reduce-scattered under sequence parallel.
//
// forward throws ConfigError for an id outside [0, V), and under sequence
// parallel when s is not divisible by tp, before communicating; it blocks in
// the tp collectives.
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
  int64_t unpaddedSize(const std::string& name) const override { return options_.vocab; }

  at::Tensor weight;  // [Vp/p, hidden]

 private:
  VocabParallelEmbeddingOptions options_;
  std::shared_ptr<Communicator> tp_;
};
TORCH_MODULE(VocabParallelEmbedding);

}  // namespace strata::tensor_parallel
