#include "reference_gpt.h"

#include <cmath>

#include "reference_masks.h"
#include "reference_weights.h"

namespace strata::testing {
namespace {

// Seed streams of the GPT's dropout sites (strata/models/gpt.h builds
// them): the embedding, and per block its attention probabilities and its
// two residual branches.
uint64_t embeddingDropoutSeed(uint64_t seed) { return splitmix(seed, 3); }
uint64_t blockSeed(uint64_t seed, int64_t index) { return splitmix(seed, 100 + index); }
uint64_t attentionDropoutSeed(uint64_t block) { return splitmix(splitmix(block, 0), 2); }
uint64_t attentionResidualSeed(uint64_t block) { return splitmix(block, 2); }
uint64_t mlpResidualSeed(uint64_t block) { return splitmix(block, 3); }

torch::Tensor layerNorm(const torch::Tensor& x, const torch::Tensor& weight,
                        const torch::Tensor& bias) {
  return torch::layer_norm(x, {x.size(-1)}, weight, bias, 1e-5);
}

torch::Tensor linear(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b) {
  return torch::matmul(x, w.t()) + b;
}

}  // namespace

ReferenceGpt::ReferenceGpt(ReferenceGptConfig config) : config_(config) {}

void ReferenceGpt::load(const std::map<std::string, torch::Tensor>& strataWeights) {
  WeightSource source(strataWeights, "reference GPT");
  const int64_t h = config_.hidden, heads = config_.heads, d = h / heads;
  tokens_ = trainableCopy(source.take("embedding.tokens.weight").narrow(0, 0, config_.vocab));
  positions_ = trainableCopy(source.take("embedding.positions"));
  blocks_.clear();
  for (int64_t i = 0; i < config_.layers; ++i) {
    std::string p = "block" + std::to_string(i) + ".";
    Block b;
    b.ln1Weight = trainableCopy(source.take(p + "ln1.weight"));
    b.ln1Bias = trainableCopy(source.take(p + "ln1.bias"));
    // Fused QKV rows are head-major [heads, 3 (q, k, v), d]: pull q, k, v apart.
    torch::Tensor qkv = source.take(p + "attention.qkv.weight").view({heads, 3, d, h});
    torch::Tensor qkvBias = source.take(p + "attention.qkv.bias").view({heads, 3, d});
    b.wq = trainableCopy(qkv.select(1, 0).reshape({h, h}));
    b.wk = trainableCopy(qkv.select(1, 1).reshape({h, h}));
    b.wv = trainableCopy(qkv.select(1, 2).reshape({h, h}));
    b.bq = trainableCopy(qkvBias.select(1, 0).reshape({h}));
    b.bk = trainableCopy(qkvBias.select(1, 1).reshape({h}));
    b.bv = trainableCopy(qkvBias.select(1, 2).reshape({h}));
    b.wo = trainableCopy(source.take(p + "attention.proj.weight"));
    b.bo = trainableCopy(source.take(p + "attention.proj.bias"));
    b.ln2Weight = trainableCopy(source.take(p + "ln2.weight"));
    b.ln2Bias = trainableCopy(source.take(p + "ln2.bias"));
    b.moe = config_.moe.experts > 0 && (i + 1) % config_.moeEvery == 0;
    if (b.moe) {
      auto take = [&](const std::string& name) { return trainableCopy(source.take(name)); };
      b.experts = referenceMoeWeights(take, p + "mlp.", config_.moe.experts, config_.sharedExperts);
    } else {
      b.w1 = trainableCopy(source.take(p + "mlp.fc1.weight"));
      b.b1 = trainableCopy(source.take(p + "mlp.fc1.bias"));
      b.w2 = trainableCopy(source.take(p + "mlp.fc2.weight"));
      b.b2 = trainableCopy(source.take(p + "mlp.fc2.bias"));
    }
    blocks_.push_back(b);
  }
  normWeight_ = trainableCopy(source.take("head.norm.weight"));
  normBias_ = trainableCopy(source.take("head.norm.bias"));
  if (config_.tiedEmbeddings) {
    head_ = torch::Tensor();
  } else {
    head_ = trainableCopy(source.take("head.lm_head.weight").narrow(0, 0, config_.vocab));
  }
  source.expectAllTaken();
}

torch::Tensor ReferenceGpt::logits(const torch::Tensor& ids, int64_t dropoutCall, bool training) {
  int64_t s = ids.size(1);
  routingLoss_ = torch::Tensor();
  torch::Tensor x = torch::embedding(tokens_, ids) + positions_.narrow(0, 0, s);  // [b, s, h]
  x = dropoutActivations(x, embeddingDropoutSeed(config_.seed), dropoutCall, training);
  for (int64_t i = 0; i < config_.layers; ++i) x = block(blocks_[i], i, x, dropoutCall, training);
  x = layerNorm(x, normWeight_, normBias_);
  return torch::matmul(x, (head_.defined() ? head_ : tokens_).t());  // [b, s, V]
}

torch::Tensor ReferenceGpt::loss(const torch::Tensor& ids, const torch::Tensor& targets,
                                 int64_t dropoutCall, bool training) {
  torch::Tensor z = logits(ids, dropoutCall, training);
  return torch::nn::functional::cross_entropy(z.reshape({-1, config_.vocab}),
                                              targets.reshape({-1}));
}

torch::Tensor ReferenceGpt::block(const Block& blk, int64_t index, const torch::Tensor& x,
                                  int64_t call, bool training) {
  uint64_t seed = blockSeed(config_.seed, index);
  torch::Tensor attended =
      attention(blk, index, layerNorm(x, blk.ln1Weight, blk.ln1Bias), call, training);
  torch::Tensor h = x + dropoutActivations(attended, attentionResidualSeed(seed), call, training);
  torch::Tensor down = mlp(blk, layerNorm(h, blk.ln2Weight, blk.ln2Bias));
  return h + dropoutActivations(down, mlpResidualSeed(seed), call, training);
}

torch::Tensor ReferenceGpt::mlp(const Block& blk, const torch::Tensor& x) {
  if (!blk.moe) return linear(gelu(linear(x, blk.w1, blk.b1)), blk.w2, blk.b2);
  ReferenceMoeResult r = referenceMoe(x, blk.experts, config_.moe);
  torch::Tensor terms = config_.auxLossCoeff * r.balance + config_.zLossCoeff * r.z;
  routingLoss_ = routingLoss_.defined() ? routingLoss_ + terms : terms;
  return r.output;
}

torch::Tensor ReferenceGpt::gelu(const torch::Tensor& x) const {
  if (!config_.geluTanh) return torch::gelu(x);
  return 0.5 * x * (1.0 + torch::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x.pow(3))));
}

torch::Tensor ReferenceGpt::attention(const Block& blk, int64_t index, const torch::Tensor& x,
                                      int64_t call, bool training) {
  const int64_t b = x.size(0), s = x.size(1), heads = config_.heads;
  const int64_t d = config_.hidden / heads;
  auto split = [&](const torch::Tensor& t) {  // [b, s, h] -> [b, heads, s, d]
    return t.view({b, s, heads, d}).permute({0, 2, 1, 3});
  };
  torch::Tensor q = split(linear(x, blk.wq, blk.bq));
  torch::Tensor k = split(linear(x, blk.wk, blk.bk));
  torch::Tensor v = split(linear(x, blk.wv, blk.bv));
  torch::Tensor scores = torch::matmul(q, k.transpose(2, 3)) / std::sqrt(static_cast<double>(d));
  // Query i sees keys j <= i: every later key is set to -inf before softmax.
  torch::Tensor later = torch::ones({s, s}, torch::kBool).triu(1);
  torch::Tensor probs = torch::softmax(scores.masked_fill(later, -INFINITY), -1);  // [b, H, s, s]
  probs = dropoutProbabilities(probs, attentionDropoutSeed(blockSeed(config_.seed, index)), call,
                               training);
  torch::Tensor merged = torch::matmul(probs, v).permute({0, 2, 1, 3}).reshape({b, s, -1});
  return linear(merged, blk.wo, blk.bo);
}

torch::Tensor ReferenceGpt::dropoutActivations(const torch::Tensor& x, uint64_t siteSeed,
                                               int64_t call, bool training) const {
  const double p = config_.dropout;
  if (!training || p == 0.0) return x;
  uint64_t callSeed = splitmix(siteSeed, static_cast<uint64_t>(call));
  torch::Tensor keep = bernoulliKeep({x.size(1), x.size(0), x.size(2)}, p, callSeed);  // [s, b, h]
  return x * keep.transpose(0, 1) * (1.0 / (1.0 - p));
}

torch::Tensor ReferenceGpt::dropoutProbabilities(const torch::Tensor& probs, uint64_t siteSeed,
                                                 int64_t call, bool training) const {
  const double p = config_.dropout;
  if (!training || p == 0.0) return probs;
  uint64_t callSeed = splitmix(siteSeed, static_cast<uint64_t>(call));
  std::vector<torch::Tensor> masks;
  for (int64_t head = 0; head < probs.size(1); ++head) {
    masks.push_back(bernoulliKeep({probs.size(0), probs.size(2), probs.size(3)}, p,
                                  splitmix(callSeed, static_cast<uint64_t>(head))));
  }
  return probs * torch::stack(masks, 1) * (1.0 / (1.0 - p));
}

std::vector<torch::Tensor> ReferenceGpt::trainable() const {
  std::vector<torch::Tensor> all = {tokens_, positions_};
  for (const Block& b : blocks_)
    for (const torch::Tensor& t : blockWeights(b)) all.push_back(t);
  all.push_back(normWeight_);
  all.push_back(normBias_);
  if (head_.defined()) all.push_back(head_);
  return all;
}

std::vector<torch::Tensor> ReferenceGpt::blockWeights(const Block& b) const {
  std::vector<torch::Tensor> all = {b.ln1Weight, b.ln1Bias, b.wq, b.wk, b.wv,        b.bq,
                                    b.bk,        b.bv,      b.wo, b.bo, b.ln2Weight, b.ln2Bias};
  if (!b.moe) {
    for (const torch::Tensor& t : {b.w1, b.b1, b.w2, b.b2}) all.push_back(t);
    return all;
  }
  for (const torch::Tensor& t : referenceMoeTensors(b.experts)) all.push_back(t);
  return all;
}

std::map<std::string, torch::Tensor> ReferenceGpt::parameters() const {
  const int64_t h = config_.hidden, heads = config_.heads, d = h / heads;
  auto fuse = [&](const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v) {
    // [h, ...] each -> head-major [heads, 3, d, ...] -> [3h, ...]
    std::vector<int64_t> shape = {heads, d};
    if (q.dim() == 2) shape.push_back(h);
    torch::Tensor fused = torch::stack({q.view(shape), k.view(shape), v.view(shape)}, 1);
    return q.dim() == 2 ? fused.reshape({3 * h, h}) : fused.reshape({3 * h});
  };
  std::map<std::string, torch::Tensor> out;
  out["embedding.tokens.weight"] = tokens_;
  out["embedding.positions"] = positions_;
  for (int64_t i = 0; i < config_.layers; ++i) {
    const Block& b = blocks_[i];
    std::string p = "block" + std::to_string(i) + ".";
    out[p + "ln1.weight"] = b.ln1Weight;
    out[p + "ln1.bias"] = b.ln1Bias;
    out[p + "attention.qkv.weight"] = fuse(b.wq, b.wk, b.wv);
    out[p + "attention.qkv.bias"] = fuse(b.bq, b.bk, b.bv);
    out[p + "attention.proj.weight"] = b.wo;
    out[p + "attention.proj.bias"] = b.bo;
    out[p + "ln2.weight"] = b.ln2Weight;
    out[p + "ln2.bias"] = b.ln2Bias;
    if (!b.moe) {
      out[p + "mlp.fc1.weight"] = b.w1;
      out[p + "mlp.fc1.bias"] = b.b1;
      out[p + "mlp.fc2.weight"] = b.w2;
      out[p + "mlp.fc2.bias"] = b.b2;
      continue;
    }
    putReferenceMoeWeights(b.experts, p + "mlp.", out);
  }
  out["head.norm.weight"] = normWeight_;
  out["head.norm.bias"] = normBias_;
  if (head_.defined()) out["head.lm_head.weight"] = head_;
  for (auto& [name, tensor] : out) tensor = tensor.detach().clone();
  return out;
}

torch::Tensor ReferenceGpt::maskedLossSum(const torch::Tensor& ids, const torch::Tensor& targets,
                                          int64_t dropoutCall, bool training) {
  torch::Tensor z = logits(ids, dropoutCall, training);
  return torch::nn::functional::cross_entropy(
      z.reshape({-1, config_.vocab}), targets.reshape({-1}),
      torch::nn::functional::CrossEntropyFuncOptions().ignore_index(-1).reduction(torch::kSum));
}

}  // namespace strata::testing
