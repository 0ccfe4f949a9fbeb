// A mixture-of-experts MLP (moe_options.h has the math), a drop-in for a
// decoder block's dense MLP:
//
//   x [s, b, hidden] -> tokens [T = s b, hidden]
//   router: gates and top_k experts per token (float32)
//   capacity (optional): assignments over capacity dropped
//   dispatch: tokens to their experts' ep ranks (token_exchange.h)
//   experts: each local expert's SwiGLU on its rows, split over tp
//   combine: outputs back, each token's slots summed by gate
//   + shared experts (one SwiGLU, every token), -> [s, b, hidden]
//
// Parameters: router.weight [E, hidden] (replicated over tp and ep),
// experts.J.{gate,up,down}.weight for this ep rank's experts J (split over
// tp), shared.{gate,up,down}.weight with shared experts; under LoRA their
// lora_a and lora_b beside them.
//
// In training with gradients recorded, the routing losses are computed and
// enter backward here, scaled by ExpertParallel::lossScale(), and the
// layer's statistics go to the ExpertParallel. Under tp every rank routes
// the same tokens alike; the experts' input enters the tp region once and
// their partial outputs are summed over tp before they are weighted, so the
// router's gradient is the same on every tp rank.
//
// Blocks in the tp collectives, the ep group's all-to-alls and (for the
// balance loss and capacity) the cp group's all-reduce and all-gather, each
// within its communicator's timeout. The constructor throws ConfigError
// naming the values (checkMoe).
#pragma once

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/pimpl.h>

#include <cstdint>
#include <memory>

#include "strata/expert_parallel/expert_parallel.h"
#include "strata/expert_parallel/moe_options.h"
#include "strata/tensor_parallel/init.h"
#include "strata/tensor_parallel/swiglu_mlp.h"

namespace strata::expert_parallel {

namespace detail {
class LocalExpertsImpl;
}

struct MoeMlpOptions {
  int64_t hidden = 0;
  MoeOptions moe;
  int64_t block = 0;  // the block's index, naming its statistics
  // router: stream 0, shared experts: 1, expert J: sub-stream J of stream 100
  tensor_parallel::InitOptions init;
  // Adapters on every expert's (and the shared experts') gate, up and down
  // when those are targets; the router has none.
  tensor_parallel::LoraConfig lora;
};

class MoeMlpImpl : public torch::nn::Module {
 public:
  MoeMlpImpl(const MoeMlpOptions& options, std::shared_ptr<Communicator> tp,
             std::shared_ptr<ExpertParallel> ep);

  // x [s, b, hidden] -> [s, b, hidden] (s: this rank's tokens of each sequence under cp).
  at::Tensor forward(const at::Tensor& x);

  torch::nn::Linear router{nullptr};
  tensor_parallel::ParallelSwiGluMlp shared{nullptr};  // nullptr without shared experts

 private:
  at::Tensor chooseExperts(const at::Tensor& routed, int64_t s, int64_t b, int64_t& dropped) const;

  MoeMlpOptions options_;
  std::shared_ptr<Communicator> tp_;
  std::shared_ptr<ExpertParallel> ep_;
  std::shared_ptr<detail::LocalExpertsImpl> experts_;
};
TORCH_MODULE(MoeMlp);

}  // namespace strata::expert_parallel
