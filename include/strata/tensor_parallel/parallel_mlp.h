// Tensor-parallel MLP: Y = GELU(X A) B with A split by columns and B by rows,
// so GELU applies to each rank's columns independently: one all-reduce in
// forward (after B) and one in backward (before A). GELU is the exact form,
// x * Phi(x) with the normal CDF (erf), unless geluTanh asks for GPT-2's
// tanh approximation, 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
//
// Input/output [s, b, hidden], or [s/p, b, hidden] under sequence parallel
// (all-gather before A, reduce-scatter after B instead).
//
// The constructor throws ConfigError when hidden or ffn is not divisible by
// tp; forward blocks in the tp collectives.
#pragma once

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>

#include <memory>

#include "strata/tensor_parallel/column_parallel_linear.h"
#include "strata/tensor_parallel/row_parallel_linear.h"

namespace strata::tensor_parallel {

struct ParallelMLPOptions {
  int64_t hidden = 0;
  int64_t ffn = 0;
  bool sequenceParallel = false;
  InitOptions init;  // fc1 and fc2 draw from sub-streams 0 and 1 of init.seed
  // Last, so that brace initialisations of the fields above stay valid.
  bool geluTanh = false;  // GPT-2's GELU rather than the exact one
};

class ParallelMLPImpl : public torch::nn::Module {
 public:
  ParallelMLPImpl(const ParallelMLPOptions& options, std::shared_ptr<Communicator> tp);

  at::Tensor forward(const at::Tensor& x);

  ColumnParallelLinear fc1{nullptr};  // hidden -> ffn/p
  RowParallelLinear fc2{nullptr};     // ffn/p -> hidden

 private:
  bool geluTanh_;  // the tanh approximation, not the exact GELU
};
TORCH_MODULE(ParallelMLP);

}  // namespace strata::tensor_parallel
