// The serial math every tensor-parallel layer must equal, in plain LibTorch.
//
// Written from the formulas in the layer headers, not from their code, and
// using nothing of Strata's tensor_parallel library (this header and its .cpp
// must never include one), so a mistake that a parallel layer shares with
// its own serial run cannot hide here. Weights use torch's Linear convention
// (weight [out, in]) and are the full serial tensors.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

namespace strata::testing::reference {

// [..., in] -> [..., out]: x weight^T + bias.
at::Tensor linear(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias);

struct MlpWeights {
  at::Tensor fc1Weight;  // [ffn, hidden]
  at::Tensor fc1Bias;    // [ffn]
  at::Tensor fc2Weight;  // [hidden, ffn]
  at::Tensor fc2Bias;    // [hidden]
};

// [..., hidden] -> [..., hidden]: fc2(GELU(fc1(x))) with the exact (erf) GELU.
at::Tensor mlp(const at::Tensor& x, const MlpWeights& weights);

struct AttentionWeights {
  at::Tensor qkvWeight;   // [3 hidden, hidden], output rows laid out [heads, 3 (q, k, v), d]
  at::Tensor qkvBias;     // [3 hidden], same layout
  at::Tensor projWeight;  // [hidden, hidden], input columns laid out [heads, d]
  at::Tensor projBias;    // [hidden]
};

// [s, b, hidden] -> [s, b, hidden]: causal softmax attention per head,
// softmax(Q K^T / sqrt(d) with j > i masked) V, then the output projection.
at::Tensor causalSelfAttention(const at::Tensor& x, const AttentionWeights& weights, int64_t heads);

struct LayerNormWeights {
  at::Tensor weight;  // [hidden]
  at::Tensor bias;    // [hidden]
};

// [..., hidden] -> [..., hidden], eps 1e-5 (ParallelLayerNorm's default).
at::Tensor layerNorm(const at::Tensor& x, const LayerNormWeights& weights);

struct BlockWeights {
  LayerNormWeights ln1;
  AttentionWeights attention;
  LayerNormWeights ln2;
  MlpWeights mlp;
};

// Pre-LN block without dropout: h = x + attn(ln1(x)); y = h + mlp(ln2(h)).
at::Tensor transformerBlock(const at::Tensor& x, const BlockWeights& weights, int64_t heads);

// ids [s, b] (int64) -> rows of table [V, hidden]: [s, b, hidden].
at::Tensor embedding(const at::Tensor& ids, const at::Tensor& table);

// logits [..., V], targets [...] -> per-token loss [...]: -log softmax(z)_t.
at::Tensor crossEntropy(const at::Tensor& logits, const at::Tensor& targets);

}  // namespace strata::testing::reference
