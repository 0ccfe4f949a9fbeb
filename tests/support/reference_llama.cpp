#include "reference_llama.h"

#include <algorithm>
#include <cmath>

#include "reference_masks.h"
#include "reference_weights.h"

namespace strata::testing {

ReferenceLlama::ReferenceLlama(ReferenceLlamaConfig config) : config_(config) {}

void ReferenceLlama::load(const std::map<std::string, torch::Tensor>& strataWeights) {
  WeightSource source(strataWeights, "reference Llama");
  // A padded vocabulary's extra rows (tp padding) are not part of the model.
  tokens_ = trainableCopy(source.take("embedding.tokens.weight").narrow(0, 0, config_.vocab));
  blocks_.clear();
  for (int64_t i = 0; i < config_.layers; ++i) {
    std::string p = "block" + std::to_string(i) + ".";
    Block b;
    b.index = i;
    b.attentionNorm = trainableCopy(source.take(p + "attention_norm.weight"));
    b.wq = trainableCopy(source.take(p + "attention.q.weight"));
    b.wk = trainableCopy(source.take(p + "attention.k.weight"));
    b.wv = trainableCopy(source.take(p + "attention.v.weight"));
    b.wo = trainableCopy(source.take(p + "attention.o.weight"));
    b.mlpNorm = trainableCopy(source.take(p + "mlp_norm.weight"));
    b.moe = config_.moe.experts > 0 && (i + 1) % config_.moeEvery == 0;
    std::vector<std::string> targets =
        config_.loraRank > 0 ? config_.loraTargets : std::vector<std::string>{};
    if (b.moe) {
      auto take = [&](const std::string& name) { return trainableCopy(source.take(name)); };
      double scale = config_.loraRank > 0 ? config_.loraAlpha / config_.loraRank : 0.0;
      b.experts = referenceMoeWeights(take, p + "mlp.", config_.moe.experts, config_.sharedExperts,
                                      targets, scale);
    } else {
      b.wGate = trainableCopy(source.take(p + "mlp.gate.weight"));
      b.wUp = trainableCopy(source.take(p + "mlp.up.weight"));
      b.wDown = trainableCopy(source.take(p + "mlp.down.weight"));
    }
    for (const std::string& t : targets) {
      bool mlp = t == "gate" || t == "up" || t == "down";
      if (b.moe && mlp) continue;  // the experts' own, above
      std::string place = p + adapterPlace(t) + ".";
      b.adapters[t] = {trainableCopy(source.take(place + "lora_a")),
                       trainableCopy(source.take(place + "lora_b"))};
    }
    blocks_.push_back(b);
  }
  norm_ = trainableCopy(source.take("head.norm.weight"));
  head_ = config_.tiedEmbeddings
              ? torch::Tensor()
              : trainableCopy(source.take("head.lm_head.weight").narrow(0, 0, config_.vocab));
  source.expectAllTaken();
  if (config_.loraRank == 0) return;
  // Only the adapters train: the base takes no gradients.
  tokens_.requires_grad_(false);
  norm_.requires_grad_(false);
  if (head_.defined()) head_.requires_grad_(false);
  for (Block& b : blocks_)
    for (torch::Tensor& t : blockWeights(b)) t.requires_grad_(false);
}

std::string ReferenceLlama::adapterPlace(const std::string& projection) {
  bool attention = projection == "q" || projection == "k" || projection == "v" || projection == "o";
  return (attention ? "attention." : "mlp.") + projection;
}

torch::Tensor ReferenceLlama::project(const Block& blk, const std::string& projection,
                                      const torch::Tensor& x, const torch::Tensor& weight) const {
  torch::Tensor y = torch::matmul(x, weight.t());
  auto adapter = blk.adapters.find(projection);
  if (adapter == blk.adapters.end()) return y;
  const auto& [a, b] = adapter->second;
  double scale = config_.loraAlpha / static_cast<double>(config_.loraRank);
  torch::Tensor in = adapterInput(blk, projection, x);
  return y + torch::matmul(torch::matmul(in, a.t()), b.t()) * scale;
}

torch::Tensor ReferenceLlama::adapterInput(const Block& blk, const std::string& projection,
                                           const torch::Tensor& x) const {
  double p = config_.loraDropout;
  if (!training_ || p == 0) return x;
  static const std::vector<std::string> kTargets = {"q", "k", "v", "o", "gate", "up", "down"};
  auto target = static_cast<uint64_t>(std::find(kTargets.begin(), kTargets.end(), projection) -
                                      kTargets.begin());
  uint64_t site = splitmix(splitmix(splitmix(config_.seed, 5), blk.index), target);
  uint64_t call = splitmix(site, static_cast<uint64_t>(dropoutCall_));
  torch::Tensor keep = bernoulliKeep({x.size(1), x.size(0), x.size(2)}, p, call);  // [s, b, in]
  return x * keep.transpose(0, 1) * (1.0 / (1.0 - p));
}

torch::Tensor ReferenceLlama::rms(const torch::Tensor& x, const torch::Tensor& weight) const {
  torch::Tensor meanSquare = (x * x).mean(-1, /*keepdim=*/true);
  return x / torch::sqrt(meanSquare + config_.rmsNormEps) * weight;
}

std::vector<double> ReferenceLlama::frequencies(int64_t d, double theta,
                                                const ReferenceRopeScaling& r) {
  std::vector<double> all;
  for (int64_t i = 0; i < d / 2; ++i) {
    double frequency =
        std::exp(-2.0 * static_cast<double>(i) / static_cast<double>(d) * std::log(theta));
    if (r.factor > 0) {
      double wavelength = 2 * M_PI / frequency;
      if (wavelength > r.originalContext / r.lowFreqFactor) {
        frequency /= r.factor;
      } else if (wavelength >= r.originalContext / r.highFreqFactor) {
        double smooth = (r.originalContext / wavelength - r.lowFreqFactor) /
                        (r.highFreqFactor - r.lowFreqFactor);
        frequency = (1 - smooth) * frequency / r.factor + smooth * frequency;
      }
    }
    all.push_back(frequency);
  }
  return all;
}

torch::Tensor ReferenceLlama::rotate(const torch::Tensor& x, double theta, int64_t firstPosition) {
  return rotateBy(x, frequencies(x.size(3), theta, {}), firstPosition);
}

torch::Tensor ReferenceLlama::rotateBy(const torch::Tensor& x,
                                       const std::vector<double>& frequencies,
                                       int64_t firstPosition) {
  int64_t s = x.size(2), half = x.size(3) / 2;
  auto float64 = torch::TensorOptions().dtype(torch::kDouble);
  // angle[p][i] = p * frequencies[i], for the pair (i, i + d/2)
  torch::Tensor position = torch::arange(firstPosition, firstPosition + s, float64).unsqueeze(1);
  torch::Tensor angle = position * torch::tensor(frequencies, float64).unsqueeze(0);  // [s, d/2]
  torch::Tensor c = torch::cos(angle).to(x.dtype()), sn = torch::sin(angle).to(x.dtype());
  torch::Tensor first = x.narrow(-1, 0, half), second = x.narrow(-1, half, half);
  // [first; second] -> [first cos - second sin; first sin + second cos]
  return torch::cat({first * c - second * sn, first * sn + second * c}, -1);
}

torch::Tensor ReferenceLlama::splitHeads(const torch::Tensor& x, int64_t heads) const {
  int64_t b = x.size(0), s = x.size(1);
  return x.reshape({b, s, heads, x.size(2) / heads}).transpose(1, 2);
}

torch::Tensor ReferenceLlama::kvForEachQueryHead(const torch::Tensor& kv) const {
  int64_t perKv = config_.heads / config_.kvHeads;
  torch::Tensor source = torch::arange(config_.heads, torch::kLong).div(perKv, "floor");
  return kv.index_select(1, source);
}

torch::Tensor ReferenceLlama::scores(const Block& blk, const torch::Tensor& x,
                                     int64_t firstPosition) const {
  std::vector<double> turns =
      frequencies(config_.hidden / config_.heads, config_.ropeTheta, config_.ropeScaling);
  torch::Tensor q =
      rotateBy(splitHeads(project(blk, "q", x, blk.wq), config_.heads), turns, firstPosition);
  torch::Tensor k =
      rotateBy(splitHeads(project(blk, "k", x, blk.wk), config_.kvHeads), turns, firstPosition);
  double d = static_cast<double>(config_.hidden / config_.heads);
  return torch::matmul(q, kvForEachQueryHead(k).transpose(-2, -1)) / std::sqrt(d);
}

torch::Tensor ReferenceLlama::attentionScores(int64_t index, const torch::Tensor& x,
                                              int64_t firstPosition) const {
  return scores(blocks_.at(static_cast<size_t>(index)), x, firstPosition);
}

torch::Tensor ReferenceLlama::attention(const Block& blk, const torch::Tensor& x) const {
  int64_t b = x.size(0), s = x.size(1);
  torch::Tensor future = torch::ones({s, s}, torch::kBool).triu(1);
  torch::Tensor probs = torch::softmax(scores(blk, x, 0).masked_fill(future, -INFINITY), -1);
  torch::Tensor v = splitHeads(project(blk, "v", x, blk.wv), config_.kvHeads);
  torch::Tensor heads = torch::matmul(probs, kvForEachQueryHead(v));  // [b, H, s, d]
  return project(blk, "o", heads.transpose(1, 2).reshape({b, s, -1}), blk.wo);
}

torch::Tensor ReferenceLlama::mlp(const Block& blk, const torch::Tensor& x) {
  if (blk.moe) {
    ReferenceMoeResult r = referenceMoe(x, blk.experts, config_.moe);
    torch::Tensor terms = config_.auxLossCoeff * r.balance + config_.zLossCoeff * r.z;
    routingLoss_ = routingLoss_.defined() ? routingLoss_ + terms : terms;
    return r.output;
  }
  torch::Tensor gate = project(blk, "gate", x, blk.wGate);
  torch::Tensor up = project(blk, "up", x, blk.wUp);
  return project(blk, "down", gate * torch::sigmoid(gate) * up, blk.wDown);
}

torch::Tensor ReferenceLlama::logits(const torch::Tensor& ids) { return logits(ids, 0, false); }

torch::Tensor ReferenceLlama::logits(const torch::Tensor& ids, int64_t call, bool training) {
  dropoutCall_ = call;
  training_ = training;
  routingLoss_ = torch::Tensor();
  torch::Tensor x = torch::embedding(tokens_, ids);  // [b, s, hidden]
  for (const Block& blk : blocks_) {
    x = x + attention(blk, rms(x, blk.attentionNorm));
    x = x + mlp(blk, rms(x, blk.mlpNorm));
  }
  return torch::matmul(rms(x, norm_), (head_.defined() ? head_ : tokens_).t());
}

torch::Tensor ReferenceLlama::loss(const torch::Tensor& ids, const torch::Tensor& targets,
                                   int64_t call, bool training) {
  torch::Tensor l = logits(ids, call, training);
  return torch::nn::functional::cross_entropy(l.reshape({-1, l.size(-1)}), targets.reshape({-1}));
}

std::vector<torch::Tensor> ReferenceLlama::trainable() const {
  if (config_.loraRank > 0) {
    std::vector<torch::Tensor> adapters;
    for (const Block& b : blocks_) {
      for (const auto& [projection, ab] : b.adapters) {
        adapters.push_back(ab.first);
        adapters.push_back(ab.second);
      }
      if (b.moe)
        for (const torch::Tensor& t : referenceMoeAdapters(b.experts)) adapters.push_back(t);
    }
    return adapters;
  }
  std::vector<torch::Tensor> all{tokens_};
  for (const Block& b : blocks_)
    for (const torch::Tensor& t : blockWeights(b)) all.push_back(t);
  all.push_back(norm_);
  if (head_.defined()) all.push_back(head_);
  return all;
}

std::vector<torch::Tensor> ReferenceLlama::blockWeights(const Block& b) const {
  std::vector<torch::Tensor> all{b.attentionNorm, b.wq, b.wk, b.wv, b.wo, b.mlpNorm};
  if (!b.moe) {
    for (const torch::Tensor& t : {b.wGate, b.wUp, b.wDown}) all.push_back(t);
    return all;
  }
  for (const torch::Tensor& t : referenceMoeTensors(b.experts)) all.push_back(t);
  return all;
}

std::map<std::string, torch::Tensor> ReferenceLlama::parameters() const {
  std::map<std::string, torch::Tensor> out;
  auto put = [&](const std::string& name, const torch::Tensor& t) {
    out[name] = t.detach().clone();
  };
  put("embedding.tokens.weight", tokens_);
  for (size_t i = 0; i < blocks_.size(); ++i) {
    const Block& b = blocks_[i];
    std::string p = "block" + std::to_string(i) + ".";
    put(p + "attention_norm.weight", b.attentionNorm);
    put(p + "attention.q.weight", b.wq);
    put(p + "attention.k.weight", b.wk);
    put(p + "attention.v.weight", b.wv);
    put(p + "attention.o.weight", b.wo);
    put(p + "mlp_norm.weight", b.mlpNorm);
    for (const auto& [projection, ab] : b.adapters) {
      put(p + adapterPlace(projection) + ".lora_a", ab.first);
      put(p + adapterPlace(projection) + ".lora_b", ab.second);
    }
    if (!b.moe) {
      put(p + "mlp.gate.weight", b.wGate);
      put(p + "mlp.up.weight", b.wUp);
      put(p + "mlp.down.weight", b.wDown);
      continue;
    }
    std::map<std::string, torch::Tensor> experts;
    putReferenceMoeWeights(b.experts, p + "mlp.", experts);
    for (const auto& [name, tensor] : experts) put(name, tensor);
  }
  put("head.norm.weight", norm_);
  if (head_.defined()) put("head.lm_head.weight", head_);
  return out;
}

torch::Tensor ReferenceLlama::maskedLossSum(const torch::Tensor& ids, const torch::Tensor& targets,
                                            int64_t call, bool training) {
  torch::Tensor l = logits(ids, call, training);
  return torch::nn::functional::cross_entropy(
      l.reshape({-1, l.size(-1)}), targets.reshape({-1}),
      torch::nn::functional::CrossEntropyFuncOptions().ignore_index(-1).reduction(torch::kSum));
}

}  // namespace strata::testing
