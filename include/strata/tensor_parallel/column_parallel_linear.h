// Column-parallel linear layer: Y = XA + b with A split by columns,
// A = [A_1 ... A_p], b = [b_1 ... b_p]; rank r computes Y_r = X A_r + b_r.
//
// Parameters (torch Linear convention, weight = A^T): weight [out/p, in] is
// rows [r*out/p, (r+1)*out/p) of the serial weight, bias [out/p] likewise.
//
// Input: [s, b, in] replicated, or [s/p, b, in] under sequence parallel (then
// all-gathered along the sequence first). Output: [s, b, out/p], or the full
// [s, b, out] with gatherOutput.
//
// With padOutputToTp, out is rounded up to a multiple of tp and the extra
// rows of the weight and bias are zero (an LM head over a padded
// vocabulary): the first `out` outputs are the serial layer's, the rest are
// the caller's to ignore. Without it, the constructor throws ConfigError when
// out is not divisible by tp. forward blocks in the tp collectives (see
// comm_ops.h).
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

struct ColumnParallelLinearOptions {
  int64_t inFeatures = 0;
  int64_t outFeatures = 0;
  bool bias = true;
  bool gatherOutput = false;
  bool sequenceParallel = false;
  InitOptions init;
  bool padOutputToTp = false;
  // A LoRA adapter (lora.h): lora_a [r, in] whole, lora_b [out/p, r] split as the weight.
  LoraOptions lora;
};

class ColumnParallelLinearImpl : public torch::nn::Module, public ShardedModule {
 public:
  ColumnParallelLinearImpl(const ColumnParallelLinearOptions& options,
                           std::shared_ptr<Communicator> tp);

  at::Tensor forward(const at::Tensor& x);
  // The product of an input already entered (comm_ops.h's
  // enterTensorRegion): [s, b, in] -> [s, b, out/p] (gathered with
  // gatherOutput), no communication on the input's side.
  at::Tensor forwardEntered(const at::Tensor& entered);
  int64_t shardDim(const std::string& name) const override;
  int64_t unpaddedSize(const std::string& name) const override {
    return options_.padOutputToTp ? options_.outFeatures : kNotPadded;
  }
  const ColumnParallelLinearOptions& options() const { return options_; }

  at::Tensor weight;  // [out/p, in]
  at::Tensor bias;    // [out/p], undefined without bias
  at::Tensor loraA;   // [r, in], undefined without an adapter
  at::Tensor loraB;   // [out/p, r]

 private:
  ColumnParallelLinearOptions options_;
  std::shared_ptr<Communicator> tp_;
  SeededDropout loraDropout_;  // on the adapter's input (lora.h)
};
TORCH_MODULE(ColumnParallelLinear);

}  // namespace strata::tensor_parallel
