// Model families: what the trainer, generation, conversion and export know
// of a model, one interface for every architecture.
//
//   const ModelFamily& family = modelFamily(spec.architecture);
//   family.check(spec, tp->size());                 // ConfigError naming the values
//   torch::nn::Sequential model = family.build(spec, tp);       // or (spec, tp, cp)
//   at::Tensor loss = modelOutputLoss(model, model->forward(ids), targets);
//
// Every family builds its model as a list of layers a pipeline can cut at
// block boundaries, [embedding, block x layers, head], with activations
// [s, b, hidden] between layers ([s/tp, b, hidden] under sequence parallel;
// under context parallelism s is the cp rank's share of every sequence),
// the same head (logits split over tp by vocabulary) and the same names for
// the tied weight, so the pipeline, data parallelism, ZeRO, checkpoints and
// resharding treat every family alike. Each rank builds every layer from the
// seed (every block from a stream of its own) and keeps its tp shards, and
// given `held` its stages' blocks only, so shards and stages hold exactly the
// weights of the one-process model.
//
// Families:
//   "strata", "gpt2": the GPT (models/gpt.h); gpt2 with GPT-2's tanh GELU
//   "llama": the Llama family (models/llama.h): RMSNorm, RoPE, grouped-query
//            attention, SwiGLU, no biases
//
// Nothing here blocks but forward and the loss (in the tp collectives);
// modelFamily throws ConfigError naming the known architectures.
#pragma once

#include <ATen/core/Tensor.h>
#include <torch/nn/modules/container/sequential.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "strata/context_parallel/context_parallel.h"
#include "strata/context_parallel/packed_documents.h"
#include "strata/expert_parallel/expert_parallel.h"
#include "strata/expert_parallel/moe_options.h"
#include "strata/models/hugging_face.h"
#include "strata/runtime/communicator.h"
#include "strata/tensor_parallel/lora.h"
#include "strata/tensor_parallel/rope_scaling.h"

namespace strata::models {

// How build() leaves the layers it keeps: whole, or as shells for ZeRO-3's
// deferred initialisation, whose parameters keep their shapes with no
// memory of their own behind them (a single zero seen through zero strides;
// buffers stay whole), to be filled one layer at a time from buildLayer() as
// each is sharded, so that no rank holds every layer at once.
enum class HeldAs { kWhole, kShells };

// A model's shape and build options, for every family; each family reads
// the fields it has (a GPT has no kv heads, rotary base or RMSNorm).
struct ModelSpec {
  std::string architecture = "strata";
  int64_t layers = 4;
  int64_t hidden = 256;
  int64_t heads = 4;
  int64_t kvHeads = 0;  // grouped-query attention's kv heads; 0: as many as heads
  int64_t ffn = 1024;   // the MLP's inner width (SwiGLU's for llama)
  int64_t vocab = 256;
  int64_t context = 128;  // longest sequence (a GPT's position table)
  double dropout = 0.0;
  bool tiedEmbeddings = false;               // the head reuses the token embedding
  double ropeTheta = 10000.0;                // rotary base (llama)
  double rmsNormEps = 1e-5;                  // RMSNorm's epsilon (llama)
  tensor_parallel::RopeScaling ropeScaling;  // llama
  bool sequenceParallel = false;
  // The head returns its norm's output and modelOutputLoss takes the head's
  // product and the cross-entropy together, chunk by chunk. Training only:
  // sampling needs logits.
  bool fusedHeadLoss = false;
  // Mixture-of-experts MLPs (experts = 0: dense).
  expert_parallel::MoeOptions moe;
  uint64_t seed = 1234;
  // Training on packed documents (data.pack): the batch's documents, which
  // the trainer selects per micro-batch and every attention (and a GPT's
  // position table) reads; nullptr: each sequence one document.
  std::shared_ptr<const context_parallel::PackedDocuments> documents;
  // LoRA adapters (finetune.method = "lora"; llama only); none by default.
  tensor_parallel::LoraConfig lora;

  int64_t kvHeadCount() const { return kvHeads > 0 ? kvHeads : heads; }
  int64_t headDim() const { return heads > 0 ? hidden / heads : 0; }
};

class ModelFamily {
 public:
  virtual ~ModelFamily() = default;
  // "gpt" or "llama".
  virtual std::string name() const = 0;
  // Throws ConfigError naming the values when `spec` cannot be built over
  // `tp` tensor-parallel ranks; builds nothing, so every rank can check
  // before any communication.
  virtual void check(const ModelSpec& spec, int tp) const = 0;
  // layers + 2 modules: the embedding, the blocks, the head (check() first).
  // With `cp`, every sequence is split over its group: each rank is given
  // its tokens (context_parallel::localTokens) and attention sees them whole.
  // With spec.moe, `ep` spreads the experts and collects the routing
  // statistics (nullptr: every expert here, statistics kept by the model).
  // `held` (layers + 2 flags, or empty for all) names the top-level modules
  // this rank keeps, a pipeline rank's stages' (pipeline::layersHeldBy): the
  // blocks outside it are emptied as they are built, so a rank never holds
  // the whole model; their names and the kept ones' values are the whole
  // model's. The embedding and head are always built (the trainer releases
  // the ones a rank does not run once the pipeline is cut: a tied head
  // shares the embedding's weight); `heldAs` says how the layers `held`
  // keeps are left (HeldAs above), while an embedding or head it leaves out
  // stays whole.
  virtual torch::nn::Sequential build(
      const ModelSpec& spec, std::shared_ptr<Communicator> tp,
      std::shared_ptr<const context_parallel::ContextParallel> cp = nullptr,
      std::shared_ptr<expert_parallel::ExpertParallel> ep = nullptr,
      const std::vector<bool>& held = {}, HeldAs heldAs = HeldAs::kWhole) const = 0;
  // Top-level module `layer` of the model build() makes (0 the embedding,
  // 1 to layers the blocks, layers + 1 the head), alone, with the same
  // values (every layer draws from a seed stream of its own), its parameter
  // names those under build()'s "<module>.". A head tied to the embedding
  // registers a token table built afresh as its "tied_weight". Throws
  // ConfigError for a layer outside the model.
  virtual std::shared_ptr<torch::nn::Module> buildLayer(
      const ModelSpec& spec, int64_t layer, std::shared_ptr<Communicator> tp,
      std::shared_ptr<const context_parallel::ContextParallel> cp = nullptr,
      std::shared_ptr<expert_parallel::ExpertParallel> ep = nullptr) const = 0;
  // Parameters of the whole (unsharded) model, the tied weight once.
  virtual int64_t parameterCount(const ModelSpec& spec) const = 0;
  // The weights that take part in matrix products per token: every
  // projection of every block and the LM head (counted when tied too), for
  // model FLOPs (strata/report/flops.h); of an MoE MLP the router, the top_k
  // experts and the shared ones (the active parameters).
  virtual int64_t matmulParameters(const ModelSpec& spec) const = 0;
  // The model's Hugging Face format (hugging_face.h); throws ConfigError for
  // an architecture without an equivalent in transformers, saying which has.
  virtual std::unique_ptr<HuggingFaceLayout> huggingFace(const ModelSpec& spec) const = 0;
};

// The family of `architecture`; throws ConfigError naming the known ones.
const ModelFamily& modelFamily(const std::string& architecture);
// Every architecture name modelFamily knows.
std::vector<std::string> modelArchitectures();

// For each block, the first block of the same structure, whose cost it
// shares: in every family a block is dense or, where spec.moe puts one, a
// mixture of experts. What a measured pipeline cut times in its place.
std::vector<int64_t> blockStandIns(const ModelSpec& spec);

// Names of the two registrations of a tied weight in a built model (the
// head's is the embedding's tensor registered again).
constexpr const char* kTiedEmbeddingName = "embedding.tokens.weight";
constexpr const char* kTiedHeadName = "head.tied_weight";

// The mean next-token cross-entropy of logits [s, b, Vp/tp] (split over tp
// by vocabulary) against targets [b, s], in float32 whatever the logits'
// type. With countedTargets > 0, targets < 0 count in no loss and the loss
// is the sum over the others divided by countedTargets (a count over more
// than these targets: the global batch's, spread over its micro-batches).
// Blocks in tp's collectives.
at::Tensor nextTokenLoss(const at::Tensor& logits, const at::Tensor& targets, Communicator& tp,
                         double countedTargets = 0);

// The same of what a built `model` returned: its logits [s, b, Vp/tp], or
// under fusedHeadLoss its head's normalized input, against targets [b, s].
// Blocks in tp's collectives.
at::Tensor modelOutputLoss(const torch::nn::Sequential& model, const at::Tensor& output,
                           const at::Tensor& targets, double countedTargets = 0);

}  // namespace strata::models
