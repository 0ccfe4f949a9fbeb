// A Llama-family decoder (Llama 2/3, Mistral, Qwen, SmolLM shapes) built from
// tensor-parallel layers, as a list of layers a pipeline can cut at block
// boundaries:
//
//   [LlamaEmbedding, LlamaBlock x layers, DecoderHead (RMSNorm)]
//
//   ids [b, s] -> token embedding (no position table) -> x [s, b, hidden]
//   block: h = x + attention(RMSNorm(x)); y = h + SwiGLU(RMSNorm(h))
//   head:  RMSNorm -> logits [s, b, Vp/tp] (untied by default)
//
// Attention is grouped-query with rotary position embeddings
// (tensor_parallel/grouped_query_attention.h: how kv heads are split or
// replicated over tp), the MLP SwiGLU (tensor_parallel/swiglu_mlp.h); no
// layer has a bias, and the family has no dropout. Parameter names:
//   embedding.tokens.weight                          [V, hidden]
//   blockN.attention_norm.weight, blockN.mlp_norm.weight   [hidden]
//   blockN.attention.{q,o}.weight                    [H d, hidden], [hidden, H d]
//   blockN.attention.{k,v}.weight                    [K d, hidden]
//   blockN.mlp.{gate,up}.weight, blockN.mlp.down.weight    [ffn, hidden], [hidden, ffn]
//   or, in an MoE block (config.moe; expert_parallel/moe_mlp.h):
//   blockN.mlp.router.weight [E, hidden], blockN.mlp.experts.J.{gate,up,down}.weight,
//   blockN.mlp.shared.{gate,up,down}.weight
//   head.norm.weight [hidden], head.lm_head.weight [V, hidden] (or head.tied_weight)
// each in Hugging Face's LlamaForCausalLM layout ([out, in], RoPE's
// half-split pairs: rotary.h), so conversion renames and permutes nothing.
//
// Every rank builds every layer from the seed and keeps its shards (and,
// given `held`, its pipeline stages' blocks only).
// checkLlama throws ConfigError naming the values; construction never
// communicates; forward blocks in the tp collectives.
#pragma once

#include <ATen/core/Tensor.h>
#include <torch/nn/modules/container/sequential.h>

#include <cstdint>
#include <memory>

#include "strata/models/model_family.h"
#include "strata/runtime/communicator.h"

namespace strata::models {

struct LlamaConfig {
  int64_t layers = 4;
  int64_t hidden = 256;
  int64_t heads = 4;
  int64_t kvHeads = 4;  // K: divides heads; heads = multi-head, 1 = multi-query
  int64_t ffn = 688;    // SwiGLU's inner width
  int64_t vocab = 256;
  int64_t context = 128;  // longest sequence accepted
  double ropeTheta = 10000.0;
  tensor_parallel::RopeScaling ropeScaling;  // none: RoPE's frequencies as they are
  double rmsNormEps = 1e-5;
  bool tiedEmbeddings = false;
  bool sequenceParallel = false;
  bool fusedHeadLoss = false;       // as GptConfig's
  expert_parallel::MoeOptions moe;  // experts 0: every block dense
  uint64_t seed = 1234;
  std::shared_ptr<const context_parallel::PackedDocuments> documents;  // ModelSpec's
  tensor_parallel::LoraConfig lora;                                    // ModelSpec's
};

// The Llama config of a family-neutral spec (kv heads 0 meaning heads).
LlamaConfig llamaConfigOf(const ModelSpec& spec);

// Throws ConfigError naming the values when `config` cannot be built over
// `tp` ranks: hidden not divisible by heads or tp, an odd head dimension,
// kv heads not dividing heads, kv heads and tp neither dividing the other,
// ffn not divisible by tp, and (with MoE) checkMoe's cases and sequence
// parallelism, which MoE blocks do not take.
void checkLlama(const LlamaConfig& config, int tp);

// Parameters of the whole model, the tied weight once.
int64_t llamaParameterCount(const LlamaConfig& config);
// The weights that take part in matrix products (model_family.h).
int64_t llamaMatmulParameters(const LlamaConfig& config);

// layers + 2 modules: the embedding, the blocks, the head. MoE blocks
// spread their experts over `ep` (nullptr: all here). `held` and `heldAs`
// as ModelFamily::build's.
torch::nn::Sequential buildLlama(
    const LlamaConfig& config, std::shared_ptr<Communicator> tp,
    std::shared_ptr<const context_parallel::ContextParallel> cp = nullptr,
    std::shared_ptr<expert_parallel::ExpertParallel> ep = nullptr,
    const std::vector<bool>& held = {}, HeldAs heldAs = HeldAs::kWhole);
// Top-level module `layer` of buildLlama's model alone, with the same
// values (ModelFamily::buildLayer).
std::shared_ptr<torch::nn::Module> buildLlamaLayer(
    const LlamaConfig& config, int64_t layer, std::shared_ptr<Communicator> tp,
    std::shared_ptr<const context_parallel::ContextParallel> cp = nullptr,
    std::shared_ptr<expert_parallel::ExpertParallel> ep = nullptr);

}  // namespace strata::models
