// An independent GPT for the parallel-equals-serial tests: the whole model in
// plain LibTorch, written from the architecture rather than from Strata's
// layers, and calling none of them.
//
//   ids [b, s] -> token + position embedding -> dropout
//     -> blocks: x += dropout(attention(LN1(x))); x += dropout(MLP(LN2(x)))
//     -> LN -> logits [b, s, vocab] (head: the token embedding when tied)
//   attention: per head softmax(Q K^T / sqrt(d), future masked) V, dropout
//              on the probabilities; MLP: fc2(gelu(fc1(x))), erf GELU, or
//              GPT-2's tanh form 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
//              when geluTanh (written out here, not taken from at::gelu); or
//              in blocks every-1, 2 every-1, ... a mixture of SwiGLU experts
//              (reference_moe.h) when moe.experts > 0.
//
// Weights come from a Strata model by name (load()), and go back out under
// the same names and in Strata's layouts (parameters()), so a test compares
// every parameter of a parallel run with this model's after training.
//
// Dropout masks follow the recipe Strata documents for seeded dropout
// (strata/tensor_parallel/dropout.h): each dropout site has its own seed
// stream, call c of a site draws Bernoulli(1 - p) from a generator seeded
// with splitmix(site seed, c), the attention probabilities draw one mask per
// head. The masks are drawn here; only the recipe is shared. Strata's layers
// keep activations as [s, b, hidden], so masks are drawn in that shape and
// transposed.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "reference_model.h"
#include "reference_moe.h"

namespace strata::testing {

struct ReferenceGptConfig {
  int64_t layers = 0;
  int64_t hidden = 0;
  int64_t heads = 0;
  int64_t ffn = 0;
  int64_t vocab = 0;
  int64_t context = 0;
  double dropout = 0.0;
  bool tiedEmbeddings = false;
  bool geluTanh = false;
  uint64_t seed = 0;       // the model seed the dropout streams derive from
  ReferenceMoeConfig moe;  // experts 0: dense
  int64_t moeEvery = 1;
  bool sharedExperts = false;
  double auxLossCoeff = 0;
  double zLossCoeff = 0;
};

class ReferenceGpt : public ReferenceModel {
 public:
  explicit ReferenceGpt(ReferenceGptConfig config);

  // Copies every weight from a Strata GPT's named parameters (one process,
  // tp = 1). Rows of a padded vocabulary beyond `vocab` are dropped; a name
  // this model does not have, or one it misses, throws std::runtime_error.
  void load(const std::map<std::string, torch::Tensor>& strataWeights) override;

  // ids, targets [b, s] int64. `dropoutCall` is the call number every dropout
  // site uses (the global micro-batch index in training); ignored in eval.
  torch::Tensor logits(const torch::Tensor& ids, int64_t dropoutCall, bool training);  // [b, s, V]
  torch::Tensor loss(const torch::Tensor& ids, const torch::Tensor& targets, int64_t dropoutCall,
                     bool training) override;
  // sum over targets that are not -1, scalar
  torch::Tensor maskedLossSum(const torch::Tensor& ids, const torch::Tensor& targets,
                              int64_t dropoutCall, bool training) override;

  // Every trainable tensor (leaves with requires_grad), for an optimizer.
  std::vector<torch::Tensor> trainable() const override;
  torch::Tensor routingLoss() const override { return routingLoss_; }
  // The weights under Strata's names and layouts (fused head-major QKV,
  // unpadded vocabulary), detached copies.
  std::map<std::string, torch::Tensor> parameters() const override;

 private:
  struct Block {
    torch::Tensor ln1Weight, ln1Bias;
    torch::Tensor wq, wk, wv;  // [hidden, hidden] each: rows head-major [heads, d]
    torch::Tensor bq, bk, bv;  // [hidden]
    torch::Tensor wo, bo;      // [hidden, hidden], [hidden]
    torch::Tensor ln2Weight, ln2Bias;
    torch::Tensor w1, b1;  // [ffn, hidden], [ffn]
    torch::Tensor w2, b2;  // [hidden, ffn], [hidden]
    bool moe = false;      // experts instead of w1, b1, w2, b2
    ReferenceMoeWeights experts;
  };

  torch::Tensor mlp(const Block& blk, const torch::Tensor& x);
  std::vector<torch::Tensor> blockWeights(const Block& blk) const;

  torch::Tensor block(const Block& blk, int64_t index, const torch::Tensor& x, int64_t call,
                      bool training);
  torch::Tensor attention(const Block& blk, int64_t index, const torch::Tensor& x, int64_t call,
                          bool training);
  torch::Tensor gelu(const torch::Tensor& x) const;  // elementwise
  // x [b, s, hidden] times a Bernoulli mask drawn as [s, b, hidden].
  torch::Tensor dropoutActivations(const torch::Tensor& x, uint64_t siteSeed, int64_t call,
                                   bool training) const;
  // probs [b, heads, s, s]: head h's mask [b, s, s] from its own generator.
  torch::Tensor dropoutProbabilities(const torch::Tensor& probs, uint64_t siteSeed, int64_t call,
                                     bool training) const;

  ReferenceGptConfig config_;
  torch::Tensor tokens_;     // [V, hidden]
  torch::Tensor positions_;  // [context, hidden]
  std::vector<Block> blocks_;
  torch::Tensor normWeight_, normBias_;
  torch::Tensor head_;  // [V, hidden]; undefined when tied
  torch::Tensor routingLoss_;
};

}  // namespace strata::testing
