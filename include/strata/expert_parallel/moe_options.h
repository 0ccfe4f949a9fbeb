// A mixture-of-experts MLP's shape and training terms (the `model.moe`
// table): each token's MLP is the top_k of `experts` SwiGLU experts a router
// chooses, plus `shared_experts` always-active ones (DeepSeek's shared
// experts, run as one SwiGLU of shared_experts x expert_ffn).
//
// Gating is a softmax over every expert's router logit; the top_k are taken
// (ties to the lower expert index) and, with normalizeTopK (Mixtral's
// choice), their gates rescaled to sum to 1. Two terms join the loss that is
// trained on (not the one reported):
//   aux    sequence-wise load balance (Switch/GShard form, per sequence as
//          DeepSeek-V3): auxLossCoeff * mean over sequences of
//          sum_e f_e P_e, f_e = E / (k S) * (tokens choosing e), P_e = the
//          mean gate probability of e over the sequence's S tokens; 1 at
//          perfect balance
//   z      router z-loss (ST-MoE): zLossCoeff * mean over tokens of
//          logsumexp(logits)^2
// Capacity: dropless by default (each expert takes every token sent to
// it). With capacityFactor > 0 an expert takes at most
// ceil(capacityFactor * S * k / E) assignments of each sequence, the
// earliest positions first (slot 0 before slot 1 at one position); the rest
// are dropped (that slot adds nothing) and counted.
//
// checkMoe throws ConfigError naming the values; nothing here blocks.
#pragma once

#include <cstdint>

namespace strata::expert_parallel {

struct MoeOptions {
  int64_t experts = 0;  // 0: a dense model
  int64_t topK = 2;
  int64_t expertFfn = 0;      // each expert's SwiGLU inner width
  int64_t sharedExperts = 0;  // always-active experts
  int64_t every = 1;          // an MoE MLP in blocks every-1, 2 every-1, ... (1: every block)
  double auxLossCoeff = 0.01;
  double zLossCoeff = 0.0;
  double capacityFactor = 0.0;  // 0: dropless
  bool normalizeTopK = true;

  bool enabled() const { return experts > 0; }
  // Whether block `index` (from 0) has an MoE MLP.
  bool isMoeBlock(int64_t index) const { return enabled() && (index + 1) % every == 0; }
};

// An MoE MLP's parameters for width `hidden`: the router and every expert,
// or with `activeOnly` the router and the top_k experts a token uses; plus
// the shared experts (SwiGLU, no biases).
int64_t moeMlpParameters(const MoeOptions& moe, int64_t hidden, bool activeOnly);

// Throws ConfigError naming the values when `moe` cannot be built with its
// experts over `ep` ranks and each expert's ffn over `tp` ranks: top_k
// outside 1..experts, expert_ffn not positive or not divisible by tp, ep not
// dividing experts, every < 1, negative coefficients, shared experts or a
// capacity factor below 0.
void checkMoe(const MoeOptions& moe, int tp, int ep);

// A model family's MoE blocks, built whole (ep 1): checkMoe's cases, and
// sequence parallelism, which blocks routing whole tokens do not take.
void checkMoeBlocks(const MoeOptions& moe, int tp, bool sequenceParallel);

}  // namespace strata::expert_parallel
