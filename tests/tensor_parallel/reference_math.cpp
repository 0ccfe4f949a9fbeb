#include "reference_math.h"

#include <torch/torch.h>

#include <cmath>
#include <vector>

namespace strata::testing::reference {
namespace F = torch::nn::functional;

at::Tensor linear(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) {
  return F::linear(x, weight, bias);
}

at::Tensor mlp(const at::Tensor& x, const MlpWeights& weights) {
  at::Tensor up = linear(x, weights.fc1Weight, weights.fc1Bias);  // [..., ffn]
  at::Tensor activated = F::gelu(up, F::GELUFuncOptions().approximate("none"));
  return linear(activated, weights.fc2Weight, weights.fc2Bias);  // [..., hidden]
}

at::Tensor causalSelfAttention(const at::Tensor& x, const AttentionWeights& weights,
                               int64_t heads) {
  int64_t s = x.size(0);
  int64_t d = x.size(2) / heads;
  at::Tensor fused = linear(x, weights.qkvWeight, weights.qkvBias);  // [s, b, 3 hidden]
  // Additive mask: 0 where position i may see j <= i, -inf above the diagonal.
  at::Tensor future = torch::full({s, s}, -INFINITY).triu(1);  // [s, s]
  std::vector<at::Tensor> headOutputs;
  for (int64_t h = 0; h < heads; ++h) {
    // Head h owns features [3dh, 3d(h+1)): its q, then k, then v.
    int64_t first = 3 * d * h;
    at::Tensor q = fused.narrow(-1, first, d).transpose(0, 1);                    // [b, s, d]
    at::Tensor k = fused.narrow(-1, first + d, d).transpose(0, 1);                // [b, s, d]
    at::Tensor v = fused.narrow(-1, first + 2 * d, d).transpose(0, 1);            // [b, s, d]
    at::Tensor scores = torch::bmm(q, k.transpose(1, 2)) / std::sqrt(double(d));  // [b, s, s]
    at::Tensor probs = torch::softmax(scores + future, -1);
    headOutputs.push_back(torch::bmm(probs, v).transpose(0, 1));  // [s, b, d]
  }
  at::Tensor concatenated = torch::cat(headOutputs, -1);  // [s, b, hidden], features [heads, d]
  return linear(concatenated, weights.projWeight, weights.projBias);
}

at::Tensor layerNorm(const at::Tensor& x, const LayerNormWeights& weights) {
  return torch::layer_norm(x, {x.size(-1)}, weights.weight, weights.bias, 1e-5);
}

at::Tensor transformerBlock(const at::Tensor& x, const BlockWeights& weights, int64_t heads) {
  at::Tensor h = x + causalSelfAttention(layerNorm(x, weights.ln1), weights.attention, heads);
  return h + mlp(layerNorm(h, weights.ln2), weights.mlp);  // [s, b, hidden]
}

at::Tensor embedding(const at::Tensor& ids, const at::Tensor& table) {
  return torch::embedding(table, ids);
}

at::Tensor crossEntropy(const at::Tensor& logits, const at::Tensor& targets) {
  at::Tensor flat = logits.reshape({-1, logits.size(-1)});  // [tokens, V]
  at::Tensor losses = F::cross_entropy(flat, targets.reshape({-1}),
                                       F::CrossEntropyFuncOptions().reduction(torch::kNone));
  return losses.view(targets.sizes());
}

}  // namespace strata::testing::reference
