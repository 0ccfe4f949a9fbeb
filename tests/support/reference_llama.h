// An independent Llama-family decoder for the parallel-equals-serial tests:
// the whole model in plain LibTorch, written from the architecture, calling
// none of Strata's layers.
//
//   ids [b, s] -> token embedding -> blocks -> RMSNorm -> logits [b, s, V]
//   block:     x += attention(rms(x)); x += mlp(rms(x))
//   rms(x)     = x / sqrt(mean(x^2) + eps) * w
//   attention: q = x Wq^T, k = x Wk^T, v = x Wv^T (no biases); q and k
//              rotated by position; query head h reads kv head h / (H/K)
//              (k and v repeated by index); per head softmax(q k^T / sqrt(d),
//              future masked) v; out = concat(heads) Wo^T
//   mlp:       down((z_g * sigmoid(z_g)) * z_u), z_g = x Wg^T, z_u = x Wu^T,
//              or in blocks every-1, 2 every-1, ... a mixture of experts
//              (reference_moe.h) when moe.experts > 0
//
// Rotary embeddings pair dimension i of a head with i + d/2 (Hugging Face's
// half-split convention, the one Llama checkpoints on the Hub are stored in,
// so their q_proj and k_proj rows load as they are); pair i at position p
// turns by p * theta^(-2i/d). Written as the 2x2 rotation of each pair.
//
// Weights come from a Strata model by name (load()) and go back out under
// the same names (parameters()).
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "reference_model.h"
#include "reference_moe.h"

namespace strata::testing {

// Llama 3.1's rotary frequency scaling, factor 0: none.
struct ReferenceRopeScaling {
  double factor = 0;
  double lowFreqFactor = 1;
  double highFreqFactor = 4;
  double originalContext = 8192;
};

struct ReferenceLlamaConfig {
  int64_t layers = 0;
  int64_t hidden = 0;
  int64_t heads = 0;    // H
  int64_t kvHeads = 0;  // K
  int64_t ffn = 0;
  int64_t vocab = 0;
  double ropeTheta = 10000.0;
  ReferenceRopeScaling ropeScaling;
  double rmsNormEps = 1e-5;
  bool tiedEmbeddings = false;
  ReferenceMoeConfig moe;  // experts 0: dense
  int64_t moeEvery = 1;
  bool sharedExperts = false;
  double auxLossCoeff = 0;
  double zLossCoeff = 0;
  // LoRA: the projections named (q, k, v, o, gate, up, down) compute
  // x W^T + (alpha / r) (x A^T) B^T, and only A and B train; rank 0: none.
  int64_t loraRank = 0;
  double loraAlpha = 16;
  std::vector<std::string> loraTargets;
  // Dropout on each adapter's input, masks by the shared recipe
  // (reference_masks.h): block i's adapter on target t (its place in q, k,
  // v, o, gate, up, down) draws from splitmix(splitmix(splitmix(seed, 5),
  // i), t), a micro-batch's [s, b, in] at once.
  double loraDropout = 0;
  uint64_t seed = 0;  // the model seed
};

class ReferenceLlama : public ReferenceModel {
 public:
  explicit ReferenceLlama(ReferenceLlamaConfig config);

  void load(const std::map<std::string, torch::Tensor>& strataWeights) override;
  torch::Tensor logits(const torch::Tensor& ids);  // [b, s, V]
  torch::Tensor loss(const torch::Tensor& ids, const torch::Tensor& targets, int64_t dropoutCall,
                     bool training) override;
  torch::Tensor maskedLossSum(const torch::Tensor& ids, const torch::Tensor& targets,
                              int64_t dropoutCall, bool training) override;
  std::vector<torch::Tensor> trainable() const override;
  torch::Tensor routingLoss() const override { return routingLoss_; }
  std::map<std::string, torch::Tensor> parameters() const override;

  // x [b, heads, s, d] at positions firstPosition .. firstPosition + s - 1,
  // each (i, i + d/2) pair rotated by its angle.
  static torch::Tensor rotate(const torch::Tensor& x, double theta, int64_t firstPosition);
  // The same by the given frequencies of the d/2 pairs.
  static torch::Tensor rotateBy(const torch::Tensor& x, const std::vector<double>& frequencies,
                                int64_t firstPosition);
  // theta^(-2i/d) for each pair i, then scaled one by one as Llama 3.1's own
  // code does (its apply_scaling).
  static std::vector<double> frequencies(int64_t d, double theta,
                                         const ReferenceRopeScaling& scaling);
  // Block `index`'s attention scores q k^T / sqrt(d) [b, H, s, s] (before the
  // mask) of normed input x [b, s, hidden] placed at firstPosition.
  torch::Tensor attentionScores(int64_t index, const torch::Tensor& x, int64_t firstPosition) const;

 private:
  struct Block {
    torch::Tensor attentionNorm, mlpNorm;  // [hidden]
    torch::Tensor wq, wo;                  // [H d, hidden], [hidden, H d]
    torch::Tensor wk, wv;                  // [K d, hidden]
    torch::Tensor wGate, wUp, wDown;       // [ffn, hidden] x 2, [hidden, ffn]
    bool moe = false;                      // experts instead of wGate, wUp, wDown
    ReferenceMoeWeights experts;
    // LoRA adapters by projection ("q", ..., "down"): A [r, in], B [out, r].
    std::map<std::string, std::pair<torch::Tensor, torch::Tensor>> adapters;
    int64_t index = 0;
  };

  // x W^T, plus the block's adapter on `projection` when it has one.
  torch::Tensor project(const Block& block, const std::string& projection, const torch::Tensor& x,
                        const torch::Tensor& weight) const;
  // An adapter's input x [b, s, in] after its dropout, in training.
  torch::Tensor adapterInput(const Block& block, const std::string& projection,
                             const torch::Tensor& x) const;
  // The logits of a micro-batch whose dropout call is `call`.
  torch::Tensor logits(const torch::Tensor& ids, int64_t call, bool training);
  // Where each projection's adapter is named: "attention.q" ... "mlp.down".
  static std::string adapterPlace(const std::string& projection);

  torch::Tensor rms(const torch::Tensor& x, const torch::Tensor& weight) const;
  // [b, s, heads d] -> [b, heads, s, d]
  torch::Tensor splitHeads(const torch::Tensor& x, int64_t heads) const;
  // k or v [b, K, s, d] -> [b, H, s, d]: query head h gets kv head h / (H/K).
  torch::Tensor kvForEachQueryHead(const torch::Tensor& kv) const;
  torch::Tensor scores(const Block& block, const torch::Tensor& x, int64_t firstPosition) const;
  torch::Tensor attention(const Block& block, const torch::Tensor& x) const;
  torch::Tensor mlp(const Block& block, const torch::Tensor& x);
  std::vector<torch::Tensor> blockWeights(const Block& block) const;

  ReferenceLlamaConfig config_;
  torch::Tensor tokens_;  // [V, hidden]
  std::vector<Block> blocks_;
  torch::Tensor norm_;  // [hidden]
  torch::Tensor head_;  // [V, hidden]; undefined when tied
  torch::Tensor routingLoss_;
  int64_t dropoutCall_ = 0;  // the micro-batch running, and whether in training
  bool training_ = false;
};

}  // namespace strata::testing
