// The experts one rank holds: experts first .. first + count - 1 of an MoE
// layer, each a SwiGLU MLP split over tp as the dense one is (gate and up by
// output rows, down by input columns; tensor_parallel/swiglu_mlp.h),
// registered under its global index:
//   <J>.gate.weight, <J>.up.weight [expert_ffn/tp, hidden]
//   <J>.down.weight               [hidden, expert_ffn/tp]
// Expert J draws its weights from its own seed stream (deriveInit(init,
// J)), so it is the same tensor whichever rank holds it, and so do its LoRA
// adapters on gate, up and down (lora.h), split over tp as their weights.
//
// forward takes rows already entered into the tp region (every tp rank the
// same rows) and returns each rank's partial sums over its ffn columns: the
// caller reduces over tp once for all experts. Nothing here communicates.
#pragma once

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "strata/tensor_parallel/column_parallel_linear.h"
#include "strata/tensor_parallel/row_parallel_linear.h"

namespace strata::expert_parallel::detail {

class ExpertImpl : public torch::nn::Module {
 public:
  ExpertImpl(int64_t hidden, int64_t ffn, const tensor_parallel::InitOptions& init,
             const tensor_parallel::LoraConfig& lora, std::shared_ptr<Communicator> tp);
  // rows [n, hidden] -> [n, hidden], partial over tp.
  at::Tensor forward(const at::Tensor& rows);

  tensor_parallel::ColumnParallelLinear gate{nullptr};
  tensor_parallel::ColumnParallelLinear up{nullptr};
  tensor_parallel::RowParallelLinear down{nullptr};
};
TORCH_MODULE(Expert);

class LocalExpertsImpl : public torch::nn::Module {
 public:
  LocalExpertsImpl(int64_t hidden, int64_t ffn, int64_t first, int64_t count,
                   const tensor_parallel::InitOptions& init,
                   const tensor_parallel::LoraConfig& lora, std::shared_ptr<Communicator> tp);
  // grouped [N, hidden], rowsPerExpert[i] rows for local expert i in order ->
  // [N, hidden], partial over tp.
  at::Tensor forward(const at::Tensor& grouped, const std::vector<int64_t>& rowsPerExpert);

 private:
  std::vector<Expert> experts_;
};
TORCH_MODULE(LocalExperts);

}  // namespace strata::expert_parallel::detail
