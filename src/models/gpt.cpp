#include "strata/models/gpt.h"

#include <ATen/Dispatch.h>
#include <torch/torch.h>

#include <limits>

#include "strata/error.h"
#include "strata/tensor_parallel/column_parallel_linear.h"
#include "strata/tensor_parallel/comm_ops.h"
#include "strata/tensor_parallel/dropout.h"
#include "strata/tensor_parallel/init.h"
#include "strata/tensor_parallel/layer_norm.h"
#include "strata/tensor_parallel/transformer_block.h"
#include "strata/tensor_parallel/vocab_parallel_cross_entropy.h"
#include "strata/tensor_parallel/vocab_parallel_embedding.h"
#include "strata/tensor_parallel/vocab_parallel_linear_cross_entropy.h"

namespace strata::models {
namespace tp = strata::tensor_parallel;
namespace {

// Seed sub-streams: every layer draws from its own, so adding a layer never
// changes the weights of the others.
enum Stream : uint64_t { kTokens = 1, kPositions = 2, kEmbeddingDropout = 3, kHead = 4 };
uint64_t blockStream(int64_t index) { return 100 + static_cast<uint64_t>(index); }

tp::InitOptions initFor(const GptConfig& c, uint64_t stream) {
  tp::InitOptions init;
  init.seed = tp::deriveSeed(c.seed, stream);
  return init;
}

// Token plus learned position embeddings, then dropout.
class GptEmbeddingImpl : public torch::nn::Module, public tp::ShardedModule {
 public:
  GptEmbeddingImpl(const GptConfig& c, std::shared_ptr<Communicator> tpComm)
      : config_(c),
        tp_(std::move(tpComm)),
        dropout_(c.dropout, tp::deriveSeed(c.seed, kEmbeddingDropout)) {
    register_buffer("dropout_calls", dropout_.callCounter());
    tp::VocabParallelEmbeddingOptions options;
    options.vocab = c.vocab;
    options.hidden = c.hidden;
    options.sequenceParallel = c.sequenceParallel;
    options.init = initFor(c, kTokens);
    tokens = register_module("tokens", tp::VocabParallelEmbedding(options, tp_));
    positions = register_parameter(
        "positions",
        tp::seededNormal({c.context, c.hidden}, tp::deriveSeed(c.seed, kPositions), 0.02));
  }

  // ids [b, s] -> [s, b, hidden], or [s/tp, b, hidden] under sequence parallel.
  at::Tensor forward(const at::Tensor& ids) {
    int64_t s = ids.size(1);
    if (s > config_.context) {
      throw ConfigError("sequence length " + std::to_string(s) + " exceeds the model's context " +
                        std::to_string(config_.context));
    }
    at::Tensor x = tokens->forward(ids.t().contiguous());  // [s or s/tp, b, hidden]
    int64_t rows = x.size(0);
    if (!config_.sequenceParallel) {
      x = x + positions.narrow(0, 0, rows).unsqueeze(1);
      return dropout_.replicated(x, is_training());
    }
    // Each rank adds the positions of its own rows, so each holds a part of
    // the replicated table's gradient; copyToTensorRegion sums the parts
    // over tp in backward.
    at::Tensor table = tp::copyToTensorRegion(positions, *tp_);  // [context, hidden]
    x = x + table.narrow(0, tp_->rank() * rows, rows).unsqueeze(1);
    return dropout_.sequenceSharded(x, is_training(), *tp_);
  }

  int64_t shardDim(const std::string&) const override { return tp::kReplicated; }

  tp::VocabParallelEmbedding tokens{nullptr};
  at::Tensor positions;  // [context, hidden], replicated

 private:
  GptConfig config_;
  std::shared_ptr<Communicator> tp_;
  tp::SeededDropout dropout_;
};
TORCH_MODULE(GptEmbedding);

// Final LayerNorm and the LM head Y = X W^T, W [Vp, hidden] split by rows
// (the padded vocabulary) over tp, so logits stay split: [s, b, Vp/tp].
class GptHeadImpl : public torch::nn::Module, public tp::ShardedModule {
 public:
  GptHeadImpl(const GptConfig& c, std::shared_ptr<Communicator> tpComm,
              const tp::VocabParallelEmbedding& tiedTo)
      : sequenceParallel_(c.sequenceParallel),
        fusedLoss_(c.fusedHeadLoss),
        vocab_(c.vocab),
        tp_(std::move(tpComm)) {
    norm = register_module("norm", tp::ParallelLayerNorm(c.hidden, c.sequenceParallel, tp_));
    markPadding(c.vocab);
    if (tiedTo) {
      // The embedding's own tensor, registered here too so that the stage
      // holding the head trains it when the pipeline puts the embedding
      // elsewhere (see the header on keeping the two copies tied).
      tiedWeight = register_parameter("tied_weight", tiedTo->weight);  // [Vp/tp, hidden]
      return;
    }
    tp::ColumnParallelLinearOptions options;
    options.inFeatures = c.hidden;
    options.outFeatures = c.vocab;
    options.padOutputToTp = true;
    options.bias = false;
    options.sequenceParallel = c.sequenceParallel;
    options.init = initFor(c, kHead);
    lmHead = register_module("lm_head", tp::ColumnParallelLinear(options, tp_));
  }

  at::Tensor forward(const at::Tensor& x) {
    at::Tensor h = norm->forward(x);
    if (fusedLoss_) return h;
    return maskPadding(lmHead ? lmHead->forward(h) : tiedProduct(h));
  }

  // Under fusedHeadLoss: the mean cross-entropy of forward()'s output
  // against targets [b, s], the logits made and consumed chunk by chunk.
  at::Tensor loss(const at::Tensor& normed, const at::Tensor& targets) {
    if (!fusedLoss_) throw ConfigError("GptHead::loss: the head was built without fusedHeadLoss");
    at::Tensor full = sequenceParallel_ ? tp::gatherFromSequenceRegion(normed, *tp_)
                                        : tp::copyToTensorRegion(normed, *tp_);  // [s, b, hidden]
    at::Tensor weight = lmHead ? lmHead->weight : tiedWeight;                    // [Vp/tp, hidden]
    return tp::vocabParallelLinearCrossEntropy(full.reshape({-1, full.size(-1)}), weight,
                                               targets.t().reshape({-1}), vocab_, *tp_);
  }
  bool fusedLoss() const { return fusedLoss_; }
  const std::shared_ptr<Communicator>& tp() const { return tp_; }

  int64_t shardDim(const std::string& name) const override {
    return name == "tied_weight" ? 0 : tp::kReplicated;
  }
  int64_t unpaddedSize(const std::string& name) const override {
    return name == "tied_weight" ? vocab_ : kNotPadded;
  }

  tp::ParallelLayerNorm norm{nullptr};
  tp::ColumnParallelLinear lmHead{nullptr};
  at::Tensor tiedWeight;  // undefined unless tied

 private:
  // Tied: the same column-parallel product with the embedding's slice.
  at::Tensor tiedProduct(const at::Tensor& h) {
    at::Tensor full =
        sequenceParallel_ ? tp::gatherFromSequenceRegion(h, *tp_) : tp::copyToTensorRegion(h, *tp_);
    return torch::matmul(full, tiedWeight.t());
  }

  // Which of this rank's Vp/tp logits are padding (global index >= vocab).
  void markPadding(int64_t vocab) {
    int64_t shard = tp::paddedToMultiple(vocab, tp_->size()) / tp_->size();
    int64_t first = shard * tp_->rank();
    at::Tensor global = torch::arange(first, first + shard, torch::kLong);
    if (first + shard > vocab) padding_ = global >= vocab;  // [Vp/tp]
  }

  // The lowest finite value of the logits' type (bfloat16's under bf16
  // autocast: float's would overflow it) rather than -inf: exp() gives 0 all
  // the same, and no inf - inf can turn into NaN in a loss.
  at::Tensor maskPadding(const at::Tensor& logits) const {
    if (!padding_.defined()) return logits;
    at::Scalar lowest;
    AT_DISPATCH_FLOATING_TYPES_AND2(at::kBFloat16, at::kHalf, logits.scalar_type(), "maskPadding",
                                    [&] { lowest = std::numeric_limits<scalar_t>::lowest(); });
    return logits.masked_fill(padding_.to(logits.device()), lowest);
  }

  bool sequenceParallel_;
  bool fusedLoss_;
  int64_t vocab_;
  std::shared_ptr<Communicator> tp_;
  at::Tensor padding_;  // undefined when this rank holds no padding
};
TORCH_MODULE(GptHead);

void checkDivisible(const char* what, int64_t value, int tpSize) {
  if (value % tpSize != 0) {
    throw ConfigError(std::string(what) + " " + std::to_string(value) + " is not divisible by tp " +
                      std::to_string(tpSize));
  }
}

}  // namespace

int64_t gptParameterCount(const GptConfig& c) {
  int64_t perBlock = 4 * c.hidden * c.hidden + 4 * c.hidden     // attention: QKV and output
                     + 2 * c.hidden * c.ffn + c.ffn + c.hidden  // MLP
                     + 4 * c.hidden;                            // two LayerNorms
  int64_t embeddings = c.vocab * c.hidden + c.context * c.hidden;
  int64_t head = 2 * c.hidden + (c.tiedEmbeddings ? 0 : c.vocab * c.hidden);
  return embeddings + c.layers * perBlock + head;
}

torch::nn::Sequential buildGpt(const GptConfig& c, std::shared_ptr<Communicator> tpComm) {
  int tpSize = tpComm->size();
  checkDivisible("hidden", c.hidden, tpSize);
  checkDivisible("heads", c.heads, tpSize);
  checkDivisible("ffn", c.ffn, tpSize);
  if (c.hidden % c.heads != 0) {
    throw ConfigError("hidden " + std::to_string(c.hidden) + " is not divisible by heads " +
                      std::to_string(c.heads));
  }
  torch::nn::Sequential model;
  GptEmbedding embedding(c, tpComm);
  model->push_back("embedding", embedding);
  for (int64_t i = 0; i < c.layers; ++i) {
    tp::ParallelTransformerBlockOptions options;
    options.hidden = c.hidden;
    options.heads = c.heads;
    options.ffn = c.ffn;
    options.sequenceParallel = c.sequenceParallel;
    options.hiddenDropout = c.dropout;
    options.attentionDropout = c.dropout;
    options.geluTanh = c.geluTanh;
    options.init = initFor(c, blockStream(i));
    model->push_back("block" + std::to_string(i), tp::ParallelTransformerBlock(options, tpComm));
  }
  tp::VocabParallelEmbedding tiedTo{nullptr};
  if (c.tiedEmbeddings) tiedTo = embedding->tokens;
  model->push_back("head", GptHead(c, tpComm, tiedTo));
  return model;
}

at::Tensor gptLoss(const at::Tensor& logits, const at::Tensor& targets, Communicator& tpComm) {
  // logits [s, b, Vp/tp]; targets [b, s] -> [s, b] to match. The loss is
  // taken in float32 when autocast computed the logits in bfloat16.
  at::Tensor full = logits.scalar_type() == at::kFloat ? logits : logits.to(at::kFloat);
  return tp::vocabParallelCrossEntropy(full, targets.t().contiguous(), tpComm).mean();
}

at::Tensor gptOutputLoss(const torch::nn::Sequential& model, const at::Tensor& output,
                         const at::Tensor& targets) {
  auto* head = model->ptr(model->size() - 1)->as<GptHeadImpl>();
  if (!head) throw ConfigError("gptOutputLoss: the model's last layer is not a GPT head");
  return head->fusedLoss() ? head->loss(output, targets) : gptLoss(output, targets, *head->tp());
}

}  // namespace strata::models
