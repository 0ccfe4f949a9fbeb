// A pre-LN transformer block built from tensor-parallel layers:
//   h = x + dropout(attention(LN1(x)))
//   y = h + dropout(MLP(LN2(h)))
// Without sequence parallel x, h and y are replicated [s, b, hidden] and
// the residual dropout masks are the same on every rank. Under sequence
// parallel they are sequence-sharded [s/p, b, hidden]: LayerNorms, residuals
// and dropout run on each rank's rows, and the masks are the rows of the
// serial mask (see dropout.h). Each residual branch has its own dropout
// stream, drawn once per forward, so a stream's call number counts
// micro-batches (the trainer relies on this to give data-parallel replicas
// the masks of a single process).
//
// Under context parallelism (options.contextParallel) x holds this cp
// rank's tokens of every sequence; dropout is refused there (its masks would
// not be those of the whole sequence).
//
// A caller may give its own MLP (a mixture of experts) in place of the dense
// one: any module taking and returning [s, b, hidden] (the block's input
// shape), registered as "mlp" and run between LN2 and the residual dropout.
//
// The constructor throws ConfigError for sizes not divisible as the
// sublayers require, and for dropout under context parallelism; forward
// blocks in the tp and cp communication.
#pragma once

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/container/any.h>
#include <torch/nn/pimpl.h>

#include <memory>

#include "strata/tensor_parallel/dropout.h"
#include "strata/tensor_parallel/layer_norm.h"
#include "strata/tensor_parallel/parallel_attention.h"
#include "strata/tensor_parallel/parallel_mlp.h"

namespace strata::tensor_parallel {

struct ParallelTransformerBlockOptions {
  int64_t hidden = 0;
  int64_t heads = 0;
  int64_t ffn = 0;
  bool sequenceParallel = false;
  double hiddenDropout = 0.0;     // on both residual branches
  double attentionDropout = 0.0;  // on the attention probabilities
  InitOptions init;  // attention, mlp, attention / mlp residual dropout: sub-streams 0-3
  // Last, so that brace initialisations of the fields above stay valid.
  bool geluTanh = false;  // the MLP's GELU: GPT-2's tanh approximation
  // Each sequence split over this cp group; nullptr: whole sequences here.
  std::shared_ptr<const context_parallel::ContextParallel> contextParallel = nullptr;
  // The training batch's packed documents (parallel_attention.h); nullptr: none.
  std::shared_ptr<const context_parallel::PackedDocuments> documents = nullptr;
};

class ParallelTransformerBlockImpl : public torch::nn::Module {
 public:
  // `ownMlp`: the caller's MLP in place of the dense one (empty: ParallelMLP).
  ParallelTransformerBlockImpl(const ParallelTransformerBlockOptions& options,
                               std::shared_ptr<Communicator> tp, torch::nn::AnyModule ownMlp = {});

  at::Tensor forward(const at::Tensor& x);

  ParallelLayerNorm ln1{nullptr};
  ParallelSelfAttention attention{nullptr};
  ParallelLayerNorm ln2{nullptr};
  ParallelMLP mlp{nullptr};  // nullptr with the caller's own MLP

 private:
  at::Tensor runMlp(const at::Tensor& x);

  torch::nn::AnyModule ownMlp_;
  at::Tensor residualDropout(SeededDropout& dropout, const at::Tensor& x);

  bool sequenceParallel_;
  std::shared_ptr<Communicator> tp_;
  SeededDropout attentionResidualDropout_;
  SeededDropout mlpResidualDropout_;
};
TORCH_MODULE(ParallelTransformerBlock);

}  // namespace strata::tensor_parallel
