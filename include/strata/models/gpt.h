// A GPT-style decoder built from tensor-parallel layers, as a list of layers a
// pipeline can cut at block boundaries:
//
//   [GptEmbedding, ParallelTransformerBlock x layers, DecoderHead (LayerNorm)]
//
//   ids [b, s] (int64) -> embedding -> x [s, b, hidden] -> blocks -> head ->
//   logits [s, b, Vp/tp] (this rank's vocabulary slice)
//
// Vp is the vocabulary rounded up to a multiple of tp: the embedding and an
// untied head carry zero padding rows, and the head sets the padding logits
// to the lowest float, so softmax and the loss see exactly the serial
// model's vocabulary (and the padding rows receive no gradient).
//
// Under sequence parallel the activations between layers are [s/tp, b, hidden].
// nextTokenLoss (model_family.h) turns the head's logits and the targets
// [b, s] into the mean cross-entropy without gathering the vocabulary.
//
// Every rank builds every layer from the same seed (emptying the blocks
// `held` leaves out), so tp shards and pipeline stages hold exactly the
// weights of the one-process model. Construction throws
// ConfigError naming the values (hidden, heads or ffn not divisible by tp) and
// never communicates; forward blocks in the tp collectives.
//
// Tied embeddings: the head registers the embedding's weight tensor as its own
// parameter (kTiedHeadName, model_family.h; so `parameters()` of the whole
// model lists it twice — deduplicate before building an optimizer). When a
// pipeline puts the embedding and the head on different ranks, each holds a
// copy; summing the two copies' gradients between the first and last stage
// before every optimizer step keeps them equal (the trainer does this).
//
// The trainer reaches this family through model_family.h (architectures
// "strata" and "gpt2"); buildGpt is for code that wants a GPT directly.
#pragma once

#include <ATen/core/Tensor.h>
#include <torch/nn/modules/container/sequential.h>

#include <cstdint>
#include <memory>

#include "strata/models/model_family.h"
#include "strata/runtime/communicator.h"

namespace strata::models {

struct GptConfig {
  int64_t layers = 4;
  int64_t hidden = 256;
  int64_t heads = 4;
  int64_t ffn = 1024;
  int64_t vocab = 256;
  int64_t context = 128;
  double dropout = 0.0;
  bool tiedEmbeddings = false;  // LM head reuses the token embedding
  bool geluTanh = false;        // GPT-2's tanh-approximated GELU in the MLPs
  bool sequenceParallel = false;
  // The head returns its LayerNorm's output instead of the logits, and
  // modelOutputLoss takes the head's product and the cross-entropy together,
  // chunk by chunk (vocab_parallel_linear_cross_entropy.h): float32 logits
  // exist one chunk at a time. For training only: sampling needs logits.
  bool fusedHeadLoss = false;
  // Mixture-of-experts MLPs (SwiGLU experts, expert_parallel/moe_mlp.h) in
  // the blocks moe.isMoeBlock names; experts 0: every block dense.
  expert_parallel::MoeOptions moe;
  uint64_t seed = 1234;
  std::shared_ptr<const context_parallel::PackedDocuments> documents;  // ModelSpec's
};

// Parameters of the whole (unsharded) model, for FLOP counts and reports.
int64_t gptParameterCount(const GptConfig& config);

// Throws ConfigError naming the values when `config` cannot be split over
// `tp` ranks (hidden, heads or ffn not divisible by tp, hidden not by heads),
// and with MoE for checkMoe's cases and sequence parallelism.
void checkGpt(const GptConfig& config, int tp);

// The weights that take part in matrix products (model_family.h).
int64_t gptMatmulParameters(const GptConfig& config);

// Builds layers + 2 modules: the embedding, the blocks, the head. MoE
// blocks spread their experts over `ep` (nullptr: all here). An MoE block's
// MLP parameters: blockN.mlp.router.weight, blockN.mlp.experts.J.{gate,up,
// down}.weight, blockN.mlp.shared.* (no biases), in place of fc1 and fc2.
// `held` and `heldAs` as ModelFamily::build's.
torch::nn::Sequential buildGpt(
    const GptConfig& config, std::shared_ptr<Communicator> tp,
    std::shared_ptr<const context_parallel::ContextParallel> cp = nullptr,
    std::shared_ptr<expert_parallel::ExpertParallel> ep = nullptr,
    const std::vector<bool>& held = {}, HeldAs heldAs = HeldAs::kWhole);
// Top-level module `layer` of buildGpt's model alone, with the same values
// (ModelFamily::buildLayer).
std::shared_ptr<torch::nn::Module> buildGptLayer(
    const GptConfig& config, int64_t layer, std::shared_ptr<Communicator> tp,
    std::shared_ptr<const context_parallel::ContextParallel> cp = nullptr,
    std::shared_ptr<expert_parallel::ExpertParallel> ep = nullptr);

// The GPT config of a family-neutral spec (gpt2: GPT-2's tanh GELU).
GptConfig gptConfigOf(const ModelSpec& spec);

}  // namespace strata::models
