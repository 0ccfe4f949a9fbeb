#include "strata/models/gpt.h"

#include <torch/torch.h>

#include "models/block_experts.h"
#include "models/decoder_assembly.h"
#include "models/decoder_head.h"
#include "models/seed_streams.h"
#include "strata/error.h"
#include "strata/expert_parallel/moe_mlp.h"
#include "strata/tensor_parallel/comm_ops.h"
#include "strata/tensor_parallel/dropout.h"
#include "strata/tensor_parallel/init.h"
#include "strata/tensor_parallel/kv_cache.h"
#include "strata/tensor_parallel/transformer_block.h"
#include "strata/tensor_parallel/vocab_parallel_embedding.h"

namespace strata::models {
namespace tp = strata::tensor_parallel;
namespace {

// `draw` false: shapes only (tp::InitOptions::draw).
tp::InitOptions initFor(const GptConfig& c, uint64_t stream, bool draw) {
  tp::InitOptions init;
  init.seed = tp::deriveSeed(c.seed, stream);
  init.draw = draw;
  return init;
}

// Token plus learned position embeddings, then dropout. Under context
// parallelism each cp rank's tokens take the rows of their global positions;
// decoding incrementally, the rows after the cache's position.
class GptEmbeddingImpl : public torch::nn::Module,
                         public tp::ShardedModule,
                         public tp::DecodesIncrementally {
 public:
  GptEmbeddingImpl(const GptConfig& c, std::shared_ptr<Communicator> tpComm,
                   std::shared_ptr<const context_parallel::ContextParallel> cp, bool draw)
      : config_(c),
        tp_(std::move(tpComm)),
        cp_(std::move(cp)),
        dropout_(c.dropout, tp::deriveSeed(c.seed, kEmbeddingDropout)) {
    register_buffer("dropout_calls", dropout_.callCounter());
    tp::VocabParallelEmbeddingOptions options;
    options.vocab = c.vocab;
    options.hidden = c.hidden;
    options.sequenceParallel = c.sequenceParallel;
    options.init = initFor(c, kTokens, draw);
    tokens = register_module("tokens", tp::VocabParallelEmbedding(options, tp_));
    positions = register_parameter(
        "positions",
        tp::seededNormal({c.context, c.hidden}, tp::deriveSeed(c.seed, kPositions), 0.02, draw));
  }

  // ids [b, s] -> [s, b, hidden], or [s/tp, b, hidden] under sequence parallel.
  at::Tensor forward(const at::Tensor& ids) {
    int64_t s = ids.size(1);
    int64_t sequence = cp_ ? s * cp_->comm->size() : s;
    if (cache_) sequence += cache_->position();
    if (sequence > config_.context) {
      throw ConfigError("sequence length " + std::to_string(sequence) +
                        " exceeds the model's context " + std::to_string(config_.context));
    }
    at::Tensor x = tokens->forward(ids.t().contiguous());  // [s or s/tp, b, hidden]
    int64_t rows = x.size(0);
    if (!config_.sequenceParallel) {
      x = x + positionRows(positions, s, ids.device());
      return dropout_.replicated(x, is_training());
    }
    // Each rank adds the positions of its own rows, so each holds a part of
    // the replicated table's gradient; copyToTensorRegion sums the parts
    // over tp in backward.
    at::Tensor table = tp::copyToTensorRegion(positions, *tp_);  // [context, hidden]
    x = x + positionRows(table, s, ids.device()).narrow(0, tp_->rank() * rows, rows);
    return dropout_.sequenceSharded(x, is_training(), *tp_);
  }

  int64_t shardDim(const std::string&) const override { return tp::kReplicated; }

  void decodeWith(std::shared_ptr<tp::KvCache> cache) override {
    if (cache)
      tp::checkDecodesWhole("embedding", tp_->size(), cp_ != nullptr, config_.sequenceParallel);
    cache_ = std::move(cache);
  }

  tp::VocabParallelEmbedding tokens{nullptr};
  at::Tensor positions;  // [context, hidden], replicated

 private:
  // The table's rows of this rank's s tokens: 0 .. s-1, under context
  // parallelism the cp rank's global positions, or the s after the cache's;
  // [s, 1, hidden]. With packed documents each sequence's own positions
  // within its documents: [s, b, hidden].
  at::Tensor positionRows(const at::Tensor& table, int64_t s, at::Device device) const {
    at::Tensor segments = config_.documents ? config_.documents->segments() : at::Tensor();
    if (segments.defined()) {
      at::Tensor ids = context_parallel::documentPositions(segments.to(device));  // [b, S]
      if (cp_) ids = context_parallel::localTokens(ids, *cp_->comm);              // [b, s]
      at::Tensor bySequence = ids.t().contiguous();                               // [s, b]
      return table.index_select(0, bySequence.view(-1)).view({s, -1, table.size(1)});
    }
    if (!cp_) return table.narrow(0, cache_ ? cache_->position() : 0, s).unsqueeze(1);
    return table.index_select(0, context_parallel::localPositions(s, *cp_->comm, device))
        .unsqueeze(1);
  }

  GptConfig config_;
  std::shared_ptr<Communicator> tp_;
  std::shared_ptr<const context_parallel::ContextParallel> cp_;
  tp::SeededDropout dropout_;
  std::shared_ptr<tp::KvCache> cache_;  // nullptr: whole sequences
};
TORCH_MODULE(GptEmbedding);

void checkDivisible(const char* what, int64_t value, int tpSize) {
  if (value % tpSize != 0) {
    throw ConfigError(std::string(what) + " " + std::to_string(value) + " is not divisible by tp " +
                      std::to_string(tpSize));
  }
}

// Block `index`'s MLP: fc1 and fc2 with their biases, or the router and
// experts (all of them, or with `activeOnly` the top_k a token uses) and the
// shared ones, without biases.
int64_t gptMlpParameters(const GptConfig& c, int64_t index, bool activeOnly) {
  if (!c.moe.isMoeBlock(index)) return 2 * c.hidden * c.ffn + (activeOnly ? 0 : c.ffn + c.hidden);
  return expert_parallel::moeMlpParameters(c.moe, c.hidden, activeOnly);
}

}  // namespace

int64_t gptParameterCount(const GptConfig& c) {
  int64_t embeddings = c.vocab * c.hidden + c.context * c.hidden;
  int64_t head = 2 * c.hidden + (c.tiedEmbeddings ? 0 : c.vocab * c.hidden);
  int64_t total = embeddings + head;
  for (int64_t i = 0; i < c.layers; ++i)
    total += 4 * c.hidden * c.hidden + 4 * c.hidden  // attention: QKV and output
             + gptMlpParameters(c, i, false)         // MLP
             + 4 * c.hidden;                         // two LayerNorms
  return total;
}

void checkGpt(const GptConfig& c, int tpSize) {
  checkDivisible("hidden", c.hidden, tpSize);
  checkDivisible("heads", c.heads, tpSize);
  checkDivisible("ffn", c.ffn, tpSize);
  if (c.hidden % c.heads != 0) {
    throw ConfigError("hidden " + std::to_string(c.hidden) + " is not divisible by heads " +
                      std::to_string(c.heads));
  }
  if (c.moe.enabled()) expert_parallel::checkMoeBlocks(c.moe, tpSize, c.sequenceParallel);
}

int64_t gptMatmulParameters(const GptConfig& c) {
  // Per block Q, K, V and the output projection (4 h^2) and the MLP's
  // matrices (2 h f, or an MoE's router and active experts); the LM head
  // (h V), counted when tied too.
  int64_t total = c.hidden * c.vocab;
  for (int64_t i = 0; i < c.layers; ++i)
    total += 4 * c.hidden * c.hidden + gptMlpParameters(c, i, true);
  return total;
}

namespace {

// The GPT's parts, for assembleDecoder.
struct GptParts {
  const GptConfig& c;
  std::shared_ptr<Communicator> tpComm;
  std::shared_ptr<const context_parallel::ContextParallel> cp;
  std::shared_ptr<expert_parallel::ExpertParallel> ep;  // expertsOrLocal's

  GptEmbedding embedding(bool draw) const { return GptEmbedding(c, tpComm, cp, draw); }

  tp::ParallelTransformerBlock block(int64_t index, bool draw) const {
    tp::ParallelTransformerBlockOptions options;
    options.hidden = c.hidden;
    options.heads = c.heads;
    options.ffn = c.ffn;
    options.sequenceParallel = c.sequenceParallel;
    options.hiddenDropout = c.dropout;
    options.attentionDropout = c.dropout;
    options.geluTanh = c.geluTanh;
    options.init = initFor(c, blockStream(index), draw);
    options.contextParallel = cp;
    options.documents = c.documents;
    torch::nn::AnyModule moe;
    if (c.moe.isMoeBlock(index)) {
      expert_parallel::MoeMlpOptions m;
      m.hidden = c.hidden;
      m.moe = c.moe;
      m.block = index;
      m.init = tp::deriveInit(options.init, 1);  // the dense MLP's stream
      moe = torch::nn::AnyModule(expert_parallel::MoeMlp(m, tpComm, ep));
    }
    return tp::ParallelTransformerBlock(options, tpComm, std::move(moe));
  }

  DecoderHead head(const tp::VocabParallelEmbedding& tiedTo, bool draw) const {
    DecoderHeadOptions options;
    options.hidden = c.hidden;
    options.vocab = c.vocab;
    options.sequenceParallel = c.sequenceParallel;
    options.fusedHeadLoss = c.fusedHeadLoss;
    options.init = initFor(c, kHead, draw);
    return DecoderHead(options, tpComm, tiedTo);
  }
};

}  // namespace

torch::nn::Sequential buildGpt(const GptConfig& c, std::shared_ptr<Communicator> tpComm,
                               std::shared_ptr<const context_parallel::ContextParallel> cp,
                               std::shared_ptr<expert_parallel::ExpertParallel> ep,
                               const std::vector<bool>& held, HeldAs heldAs) {
  checkGpt(c, tpComm->size());
  ep = expertsOrLocal(c.moe, std::move(ep), cp);
  GptParts parts{c, std::move(tpComm), std::move(cp), std::move(ep)};
  return assembleDecoder(c.layers, c.tiedEmbeddings, held, heldAs, parts);
}

std::shared_ptr<torch::nn::Module> buildGptLayer(
    const GptConfig& c, int64_t layer, std::shared_ptr<Communicator> tpComm,
    std::shared_ptr<const context_parallel::ContextParallel> cp,
    std::shared_ptr<expert_parallel::ExpertParallel> ep) {
  checkGpt(c, tpComm->size());
  ep = expertsOrLocal(c.moe, std::move(ep), cp);
  GptParts parts{c, std::move(tpComm), std::move(cp), std::move(ep)};
  return assembleDecoderLayer(layer, c.layers, c.tiedEmbeddings, parts);
}

GptConfig gptConfigOf(const ModelSpec& spec) {
  GptConfig g;
  g.layers = spec.layers;
  g.hidden = spec.hidden;
  g.heads = spec.heads;
  g.ffn = spec.ffn;
  g.vocab = spec.vocab;
  g.context = spec.context;
  g.dropout = spec.dropout;
  g.tiedEmbeddings = spec.tiedEmbeddings;
  g.geluTanh = spec.architecture == "gpt2";
  g.sequenceParallel = spec.sequenceParallel;
  g.fusedHeadLoss = spec.fusedHeadLoss;
  g.moe = spec.moe;
  g.seed = spec.seed;
  g.documents = spec.documents;
  return g;
}

}  // namespace strata::models
