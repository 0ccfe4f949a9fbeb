// Model FLOPs of GPT training and model FLOPs utilisation (MFU).
//
// Per token, a training step (forward + backward) of a GPT costs
//   6 N + 12 L h s
// FLOPs (Kaplan et al. 2020; the PaLM paper's MFU definition), where
//   N = L (4 h^2 + 2 h f) + h V
// counts the weights that take part in matrix products: per block the
// Q, K, V and output projections (4 h^2) and the two feed-forward matrices
// (2 h f), plus the LM head (h V; counted even when tied to the embedding,
// whose lookup itself costs no FLOPs). Each such weight costs 2 FLOPs per
// token forward and 4 backward: 6 N. Attention scores Q K^T and their
// weighted sum over V cost 2 * 2 s h per token per layer forward, 3x that
// with backward: 12 L h s, counting the full s x s score matrix as
// PaLM does (the causal mask is not subtracted). Biases, layer norms,
// softmax and activations are left out: they are O(h) per token.
// Model FLOPs do not count recomputation from activation checkpointing, so
// MFU compares honestly across recompute settings.
//
// Pure functions: nothing blocks or throws.
#pragma once

#include <cstdint>

namespace strata::train {

struct GptShape {
  int64_t layers = 0;  // L
  int64_t hidden = 0;  // h
  int64_t ffn = 0;     // f
  int64_t vocab = 0;   // V
  int64_t seqLen = 0;  // s, tokens per training sequence
};

// N = L (4 h^2 + 2 h f) + h V
int64_t gptMatmulParameters(const GptShape& shape);
// 6 N + 12 L h s
double gptTrainingFlopsPerToken(const GptShape& shape);
// The same of any family, N its matmul parameters (models/model_family.h:
// a Llama's N counts its three MLP matrices and smaller k/v projections;
// its attention is 12 L h s as a GPT's, h = heads x head dimension).
double trainingFlopsPerToken(int64_t matmulParameters, int64_t layers, int64_t hidden,
                             int64_t seqLen);
// (flopsPerToken * tokensPerSecond) / (peakFlopsPerWorker * workers).
double modelFlopsUtilization(double flopsPerToken, double tokensPerSecond,
                             double peakFlopsPerWorker, int workers);

}  // namespace strata::train
