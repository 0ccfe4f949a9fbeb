#include "strata/models/llama.h"

#include <torch/torch.h>

#include "models/block_experts.h"
#include "models/decoder_assembly.h"
#include "models/decoder_head.h"
#include "models/seed_streams.h"
#include "strata/error.h"
#include "strata/expert_parallel/moe_mlp.h"
#include "strata/tensor_parallel/grouped_query_attention.h"
#include "strata/tensor_parallel/init.h"
#include "strata/tensor_parallel/kv_cache.h"
#include "strata/tensor_parallel/rms_norm.h"
#include "strata/tensor_parallel/swiglu_mlp.h"
#include "strata/tensor_parallel/vocab_parallel_embedding.h"

namespace strata::models {
namespace tp = strata::tensor_parallel;
namespace {

// `draw` false: shapes only (tp::InitOptions::draw).
tp::InitOptions initFor(const LlamaConfig& c, uint64_t stream, bool draw) {
  tp::InitOptions init;
  init.seed = tp::deriveSeed(c.seed, stream);
  init.draw = draw;
  return init;
}

std::string n(int64_t value) { return std::to_string(value); }

tp::GroupedQueryAttentionOptions attentionOptions(const LlamaConfig& c) {
  tp::GroupedQueryAttentionOptions a;
  a.hidden = c.hidden;
  a.heads = c.heads;
  a.kvHeads = c.kvHeads;
  a.ropeTheta = c.ropeTheta;
  a.ropeScaling = c.ropeScaling;
  a.sequenceParallel = c.sequenceParallel;
  a.documents = c.documents;
  a.lora = c.lora;
  return a;
}

// Token embedding only: positions enter through RoPE inside attention. It
// takes part in incremental decoding only to hold the cached tokens and the
// new ones to the model's context.
class LlamaEmbeddingImpl : public torch::nn::Module, public tp::DecodesIncrementally {
 public:
  // `cpSize`: the ranks each sequence is split over (its length is theirs together).
  LlamaEmbeddingImpl(const LlamaConfig& c, std::shared_ptr<Communicator> tpComm, int cpSize,
                     bool draw)
      : context_(c.context), cpSize_(cpSize) {
    tp::VocabParallelEmbeddingOptions options;
    options.vocab = c.vocab;
    options.hidden = c.hidden;
    options.sequenceParallel = c.sequenceParallel;
    options.init = initFor(c, kTokens, draw);
    tokens = register_module("tokens", tp::VocabParallelEmbedding(options, std::move(tpComm)));
  }

  // ids [b, s] -> [s, b, hidden], or [s/tp, b, hidden] under sequence parallel.
  at::Tensor forward(const at::Tensor& ids) {
    int64_t sequence = ids.size(1) * cpSize_ + (cache_ ? cache_->position() : 0);
    if (sequence > context_)
      throw ConfigError("sequence length " + n(sequence) + " exceeds the model's context " +
                        n(context_));
    return tokens->forward(ids.t().contiguous());
  }

  void decodeWith(std::shared_ptr<tp::KvCache> cache) override { cache_ = std::move(cache); }

  tp::VocabParallelEmbedding tokens{nullptr};

 private:
  int64_t context_;
  int cpSize_;
  std::shared_ptr<tp::KvCache> cache_;  // nullptr: whole sequences
};
TORCH_MODULE(LlamaEmbedding);

// Pre-norm residual block: h = x + attention(norm(x)); y = h + mlp(norm(h)).
class LlamaBlockImpl : public torch::nn::Module {
 public:
  LlamaBlockImpl(const LlamaConfig& c, int64_t index, std::shared_ptr<Communicator> tpComm,
                 std::shared_ptr<const context_parallel::ContextParallel> cp,
                 std::shared_ptr<expert_parallel::ExpertParallel> ep, bool draw) {
    tp::InitOptions init = initFor(c, blockStream(index), draw);
    // The block's adapters draw their dropout masks from a stream of its own.
    tp::LoraConfig lora = c.lora;
    lora.adapter.dropoutSeed =
        tp::deriveSeed(tp::deriveSeed(c.seed, kLoraDropout), static_cast<uint64_t>(index));
    tp::GroupedQueryAttentionOptions a = attentionOptions(c);
    a.init = tp::deriveInit(init, 0);
    a.contextParallel = std::move(cp);
    a.lora = lora;
    tp::SwiGluMlpOptions m;
    m.hidden = c.hidden;
    m.ffn = c.ffn;
    m.sequenceParallel = c.sequenceParallel;
    m.init = tp::deriveInit(init, 1);
    m.lora = lora;
    attentionNorm = register_module(
        "attention_norm", tp::ParallelRMSNorm(c.hidden, c.rmsNormEps, c.sequenceParallel, tpComm));
    attention = register_module("attention", tp::ParallelGroupedQueryAttention(a, tpComm));
    mlpNorm = register_module(
        "mlp_norm", tp::ParallelRMSNorm(c.hidden, c.rmsNormEps, c.sequenceParallel, tpComm));
    if (c.moe.isMoeBlock(index)) {
      expert_parallel::MoeMlpOptions e;
      e.hidden = c.hidden;
      e.moe = c.moe;
      e.block = index;
      e.init = tp::deriveInit(init, 2);
      e.lora = lora;
      moe = register_module("mlp", expert_parallel::MoeMlp(e, tpComm, std::move(ep)));
    } else {
      mlp = register_module("mlp", tp::ParallelSwiGluMlp(m, tpComm));
    }
  }

  // x [s, b, hidden] ([s/tp, b, hidden] under sequence parallel) -> same.
  at::Tensor forward(const at::Tensor& x) {
    at::Tensor h = x + attention(attentionNorm(x));
    at::Tensor normed = mlpNorm(h);
    return h + (moe ? moe(normed) : mlp(normed));
  }

  tp::ParallelRMSNorm attentionNorm{nullptr};
  tp::ParallelGroupedQueryAttention attention{nullptr};
  tp::ParallelRMSNorm mlpNorm{nullptr};
  tp::ParallelSwiGluMlp mlp{nullptr};    // a dense block's
  expert_parallel::MoeMlp moe{nullptr};  // an MoE block's (registered as "mlp")
};
TORCH_MODULE(LlamaBlock);

void requireDivisible(const char* what, int64_t value, int tpSize) {
  if (value % tpSize != 0)
    throw ConfigError(std::string(what) + " " + n(value) + " is not divisible by tp " + n(tpSize));
}

}  // namespace

LlamaConfig llamaConfigOf(const ModelSpec& spec) {
  LlamaConfig l;
  l.layers = spec.layers;
  l.hidden = spec.hidden;
  l.heads = spec.heads;
  l.kvHeads = spec.kvHeadCount();
  l.ffn = spec.ffn;
  l.vocab = spec.vocab;
  l.context = spec.context;
  l.ropeTheta = spec.ropeTheta;
  l.ropeScaling = spec.ropeScaling;
  l.rmsNormEps = spec.rmsNormEps;
  l.tiedEmbeddings = spec.tiedEmbeddings;
  l.sequenceParallel = spec.sequenceParallel;
  l.fusedHeadLoss = spec.fusedHeadLoss;
  l.moe = spec.moe;
  l.seed = spec.seed;
  l.documents = spec.documents;
  l.lora = spec.lora;
  return l;
}

void checkLlama(const LlamaConfig& c, int tpSize) {
  tp::checkGroupedQueryAttention(attentionOptions(c), tpSize);
  requireDivisible("hidden", c.hidden, tpSize);
  requireDivisible("ffn", c.ffn, tpSize);
  if (c.moe.enabled()) expert_parallel::checkMoeBlocks(c.moe, tpSize, c.sequenceParallel);
}

namespace {

// A block's MLP parameters: all of them, or those one token uses.
int64_t mlpParameters(const LlamaConfig& c, int64_t index, bool activeOnly) {
  if (!c.moe.isMoeBlock(index)) return 3 * c.hidden * c.ffn;  // gate, up, down
  return expert_parallel::moeMlpParameters(c.moe, c.hidden, activeOnly);
}

}  // namespace

int64_t llamaParameterCount(const LlamaConfig& c) {
  int64_t kvWidth = c.kvHeads * (c.hidden / c.heads);
  int64_t total = c.vocab * c.hidden + c.hidden + (c.tiedEmbeddings ? 0 : c.vocab * c.hidden);
  for (int64_t i = 0; i < c.layers; ++i)
    total += 2 * c.hidden * c.hidden + 2 * c.hidden * kvWidth  // q, o; k, v
             + mlpParameters(c, i, false) + 2 * c.hidden;      // the MLP, two RMSNorms
  return total;
}

int64_t llamaMatmulParameters(const LlamaConfig& c) {
  int64_t kvWidth = c.kvHeads * (c.hidden / c.heads);
  int64_t total = c.hidden * c.vocab;
  for (int64_t i = 0; i < c.layers; ++i)
    total += 2 * c.hidden * c.hidden + 2 * c.hidden * kvWidth + mlpParameters(c, i, true);
  return total;
}

namespace {

// The Llama's parts, for assembleDecoder.
struct LlamaParts {
  const LlamaConfig& c;
  std::shared_ptr<Communicator> tpComm;
  std::shared_ptr<const context_parallel::ContextParallel> cp;
  std::shared_ptr<expert_parallel::ExpertParallel> ep;  // expertsOrLocal's

  LlamaEmbedding embedding(bool draw) const {
    return LlamaEmbedding(c, tpComm, cp ? cp->comm->size() : 1, draw);
  }

  LlamaBlock block(int64_t index, bool draw) const {
    return LlamaBlock(c, index, tpComm, cp, ep, draw);
  }

  DecoderHead head(const tp::VocabParallelEmbedding& tiedTo, bool draw) const {
    DecoderHeadOptions options;
    options.hidden = c.hidden;
    options.vocab = c.vocab;
    options.rmsNorm = true;
    options.normEps = c.rmsNormEps;
    options.sequenceParallel = c.sequenceParallel;
    options.fusedHeadLoss = c.fusedHeadLoss;
    options.init = initFor(c, kHead, draw);
    return DecoderHead(options, tpComm, tiedTo);
  }
};

}  // namespace

torch::nn::Sequential buildLlama(const LlamaConfig& c, std::shared_ptr<Communicator> tpComm,
                                 std::shared_ptr<const context_parallel::ContextParallel> cp,
                                 std::shared_ptr<expert_parallel::ExpertParallel> ep,
                                 const std::vector<bool>& held, HeldAs heldAs) {
  checkLlama(c, tpComm->size());
  ep = expertsOrLocal(c.moe, std::move(ep), cp);
  LlamaParts parts{c, std::move(tpComm), std::move(cp), std::move(ep)};
  return assembleDecoder(c.layers, c.tiedEmbeddings, held, heldAs, parts);
}

std::shared_ptr<torch::nn::Module> buildLlamaLayer(
    const LlamaConfig& c, int64_t layer, std::shared_ptr<Communicator> tpComm,
    std::shared_ptr<const context_parallel::ContextParallel> cp,
    std::shared_ptr<expert_parallel::ExpertParallel> ep) {
  checkLlama(c, tpComm->size());
  ep = expertsOrLocal(c.moe, std::move(ep), cp);
  LlamaParts parts{c, std::move(tpComm), std::move(cp), std::move(ep)};
  return assembleDecoderLayer(layer, c.layers, c.tiedEmbeddings, parts);
}

}  // namespace strata::models
