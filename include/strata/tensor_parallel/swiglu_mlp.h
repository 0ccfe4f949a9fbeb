// Tensor-parallel SwiGLU MLP (Shazeer 2020), the Llama family's:
//
//   y = down(silu(gate(x)) * up(x)),   silu(z) = z * sigmoid(z)
//
// gate and up [hidden -> ffn] are column-parallel and down [ffn -> hidden]
// row-parallel, no biases: silu and the product act elementwise on each
// rank's ffn/p columns, so one all-reduce in forward (after down) and one in
// backward (where the input is entered) suffice, as for the GELU MLP. The
// input is entered once for gate and up.
//
// Input/output [s, b, hidden], or [s/p, b, hidden] under sequence parallel.
// The constructor throws ConfigError when ffn is not divisible by tp; forward
// blocks in the tp collectives.
#pragma once

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>

#include <memory>

#include "strata/tensor_parallel/column_parallel_linear.h"
#include "strata/tensor_parallel/row_parallel_linear.h"

namespace strata::tensor_parallel {

struct SwiGluMlpOptions {
  int64_t hidden = 0;
  int64_t ffn = 0;
  bool sequenceParallel = false;
  InitOptions init;  // gate, up, down: sub-streams 0-2
  LoraConfig lora;   // adapters on "gate", "up", "down" (lora.h)
};

class ParallelSwiGluMlpImpl : public torch::nn::Module {
 public:
  ParallelSwiGluMlpImpl(const SwiGluMlpOptions& options, std::shared_ptr<Communicator> tp);

  at::Tensor forward(const at::Tensor& x);

  ColumnParallelLinear gate{nullptr};  // hidden -> ffn/p
  ColumnParallelLinear up{nullptr};    // hidden -> ffn/p
  RowParallelLinear down{nullptr};     // ffn/p -> hidden

 private:
  bool sequenceParallel_;
  std::shared_ptr<Communicator> tp_;
};
TORCH_MODULE(ParallelSwiGluMlp);

}  // namespace strata::tensor_parallel
