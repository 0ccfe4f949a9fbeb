// LoRA (Hu et al., 2021): a frozen weight W [out, in] and a trained
// low-rank update of it,
//
//   y = x W^T + (alpha / r) (x A^T) B^T,    A [r, in], B [out, r]
//
// A starts random and B at zero, so training starts from the base model.
// Over tensor-parallel ranks an adapter splits as its weight does:
//   - column-parallel W (rows split): B's rows split alike, A whole on every
//     rank. Each rank's gradient of A is partial (from its own rows of B),
//     so A passes through copyToTensorRegion, which sums it over tp.
//   - row-parallel W (columns split): A's columns split alike, B whole. The
//     rank's partial product x_r A_r^T B^T joins the weight's partial sum
//     x_r W_r^T before the layer's one reduction, and B's gradient (partial
//     per rank) is summed over tp the same way.
// So a layout's adapter shards are exactly the one-process adapter's, cut
// as the weights are, and the sum is the one-process product.
//
// Parameters: `lora_a` and `lora_b` under the layer they adapt. Nothing here
// blocks but the tp collectives of the layer's forward and backward.
#pragma once

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>

#include <cstdint>
#include <set>
#include <string>

#include "strata/runtime/communicator.h"
#include "strata/tensor_parallel/init.h"

namespace strata::tensor_parallel {

struct LoraOptions {
  int64_t rank = 0;  // r; 0: no adapter
  double alpha = 16.0;
  // Dropout on the adapter's input (PEFT's lora_dropout): A reads x with
  // elements zeroed with probability p (the rest scaled by 1 / (1 - p)); the
  // frozen weight reads x itself. Its masks are seeded dropout's
  // (dropout.h) from `dropoutSeed`, the adapter's own stream.
  double dropout = 0.0;
  uint64_t dropoutSeed = 0;

  bool enabled() const { return rank > 0; }
  double scale() const { return alpha / static_cast<double>(rank); }
};

// The adapters of a model: which projections carry one ("q", "k", "v", "o",
// "gate", "up", "down"), all of the same rank, alpha and dropout. A block
// sets adapter.dropoutSeed to its own stream.
struct LoraConfig {
  LoraOptions adapter;
  std::set<std::string> targets;

  bool enabled() const { return adapter.enabled(); }
  // The adapter of projection `target`, or none; its dropout seed is
  // deriveSeed(adapter.dropoutSeed, the target's place in q, k, v, o, gate,
  // up, down).
  LoraOptions on(const std::string& target) const;
};

// The names a trained adapter's parameters end with.
constexpr const char* kLoraA = "lora_a";
constexpr const char* kLoraB = "lora_b";

// Whether parameter `name` is an adapter's (its last part lora_a or lora_b).
bool isLoraParameter(const std::string& name);
// Whether parameter `name` is the weight of a projection LoRA can adapt
// ("...q.weight" .. "...down.weight", an expert's or the shared experts'
// too): the bulk of a frozen base.
bool isProjectionWeight(const std::string& name);

// The one-process adapter of a layer W [out, in] whose init is `init`:
// A [r, in] ~ N(0, 1/in), B [out, r] zero (both unset when !init.draw).
struct LoraWeights {
  at::Tensor a;  // [r, in]
  at::Tensor b;  // [out, r]
};
LoraWeights loraWeights(const LoraOptions& options, int64_t in, int64_t out,
                        const InitOptions& init);

// (alpha / r) (x A^T) B^T for an input already in the layer's region:
// x [..., in'] -> [..., out'], with the shards a layer holds. With dropout,
// x is the adapter's input after its mask.
at::Tensor loraProduct(const at::Tensor& x, const at::Tensor& a, const at::Tensor& b,
                       const LoraOptions& options);

// Folds every adapter of a whole (tp 1) model into its weight,
// W += (alpha / r) B A, and removes nothing: the model computes the same
// with its adapters zeroed after (they are set to B = 0). For exporting a
// fine-tuned model as a plain one.
void mergeLoraAdapters(torch::nn::Module& model, const LoraOptions& options);

}  // namespace strata::tensor_parallel
