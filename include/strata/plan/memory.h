// Bytes one rank needs: model state (parameters, gradients, optimizer state
// under each ZeRO stage) and activations.
//
// Model state per rank, for P parameters on the rank (already divided by tp)
// and a data-parallel group of dp, with w, g, o bytes per parameter for
// weights, gradients and optimizer state (bf16 AdamW: 2 + 2 + 12, the fp32
// master copy, momentum and variance making the 12):
//   ZeRO 0: P(w + g + o)         ZeRO 2: Pw + P(g + o)/dp
//   ZeRO 1: P(w + g) + Po/dp     ZeRO 3: P(w + g + o)/dp
// (under context parallelism the group is dp x cp: Layout::replicas(); under
// expert parallelism a rank's experts are sharded over their own, smaller
// group, dp x cp / ep: Layout::expertReplicas()).
// Activations per layer and micro-batch of b sequences follow Korthikanti et
// al. 2022, "Reducing Activation Recomputation in Large Transformer Models",
// Table 2 (16-bit activations, a heads, tensor parallel size t):
//   tensor parallel:                  s*b*h*(10 + 24/t + 5*a*s/(h*t))
//   tensor + sequence parallel:       s*b*h*(34/t + 5*a*s/(h*t))
//   full recompute (only the input):  2*s*b*h      (2*s*b*h/t with sequence parallel)
// The llama family's, counted the same way term by term (memory.cpp), with
// ffn f:
//   tensor parallel:                  s*b*(8h + (8h + 8f)/t) + 2*a*s^2*b/t
//   tensor + sequence parallel:       s*b*(16h + 8f)/t + 2*a*s^2*b/t
//   full recompute:                   as GPT's
// An MoE layer (either family; never sequence parallel, which the trainer refuses
// with MoE) keeps, in place of the SwiGLU's 8f/t a token, with E experts,
// top_k k, expert width ef and S shared experts (moe_mlp.cpp):
//   router             the input in fp32 (it scores in float32), the fp32
//                      logits (for the z-loss) and probabilities: 4h + 8E
//   each assignment    the row dispatched to its expert (gate's and up's
//                      input, whole on every tp rank: every tp rank routes
//                      the same tokens), the expert's gate, SiLU, up and
//                      product outputs, and the row brought back for its
//                      gate's weighing: 4h + 8ef/t
//   shared experts     one SwiGLU of S*ef: 8*S*ef/t
// so s*b*(4h + 8E + k*(4h + 8ef/t) + 8*S*ef/t) for the MLP. With balanced
// routing a rank's experts take k rows a token of its own, whatever ep.
//
// Context parallelism (cp > 1) gives a rank s = S/cp tokens of every sequence
// of S, and every token-wise term above counts those s (the full-recompute
// input too). Attention keeps what its algorithm keeps (strata/context_parallel/):
//   ring        q, k and v as they entered (k and v unrepeated, at the c
//               columns of kv heads a tp rank computes: kv/t, or one head's
//               d when tp replicates them), its output in the activation
//               type and the fp32 log-sum-exp [b, a/t, s]; nothing s x s:
//                 GPT:   s*b*h*(10 + 26/t + 4*a/(h*t))   (sp: 36/t + ...)
//                 Llama: s*b*(8h + (6h + 8f)/t + 4c) + 4*a*s*b/t   (sp: 8h/t)
//               While a layer runs its backward, one tile of a block's scores
//               lives in fp32 (transientAttentionBytes): the rank's own
//               block, [b, a/t, s, s], a tile of query rows at a time of at
//               most 2^20 entries (one row at least), at 16 bytes an entry
//               (blockBackward holds the probabilities, their gradient, the
//               scores' gradient and a temporary at once), with the ring's
//               fp32 working tensors and the k/v gradients it sends.
//   all-to-all  the whole-sequence path of cp = 1 on a/(t cp) heads (the
//               gathered q, k and v, the probabilities [b, a/(t cp), S, S]):
//               exactly 1/cp of cp = 1's count, both families.
// The trainer refuses dropout under cp; a GPT's count keeps Korthikanti's
// dropout terms at every cp all the same (the planner does not know the rate
// at cp = 1 either), so that cp never looks cheaper than cp = 1 by what is a
// training choice: an upper bound by the hidden dropout masks' 2 bytes an
// element, and under all-to-all by 3 more a score entry (the attention
// dropout's mask and output).
// Nothing here throws.
#pragma once

#include "strata/plan/layout.h"
#include "strata/plan/model_desc.h"

namespace strata::plan {

struct Precision {
  double weightBytes = 2;
  double gradBytes = 2;
  double optimizerBytes = 12;
};

struct MemoryBreakdown {
  double parameters = 0;
  double gradients = 0;
  double optimizer = 0;
  double activations = 0;
  double total() const { return parameters + gradients + optimizer + activations; }
};

// Parameters, gradients and optimizer state of `params` parameters on a rank.
MemoryBreakdown modelStateBytes(double params, int dp, int zeroStage, const Precision& precision);

// Activation bytes one layer stashes per micro-batch between its forward and
// its backward, on a rank of a `cp`-rank context-parallel group.
double stashedActivationBytes(const ModelDesc& m, double microBatch, int tp, bool sequenceParallel,
                              bool recompute, int cp = 1,
                              CpAlgorithm algorithm = CpAlgorithm::kRing,
                              LayerKind kind = LayerKind::kDense);
// Activation bytes one layer holds while it runs its backward (its full set,
// rebuilt by the recompute when there is one).
double workingActivationBytes(const ModelDesc& m, double microBatch, int tp, bool sequenceParallel,
                              int cp = 1, CpAlgorithm algorithm = CpAlgorithm::kRing,
                              LayerKind kind = LayerKind::kDense);
// The MoE MLP's bytes a token of a rank keeps (above): 4h + 8E + k*(4h +
// 8ef/t) + 8*S*ef/t.
double moeMlpBytesPerToken(const ModelDesc& m, int tp);
// The score-sized part of cp = 1's count: per entry of [b, a/t, S, S], GPT's 5
// bytes (probabilities, dropout mask and dropped-out probabilities) or
// llama's 2 (probabilities).
double scoreActivationBytes(const ModelDesc& m, double microBatch, int tp);
// What attention holds only while one layer runs, on top of the above: ring
// attention's backward, s = S/cp, at its peak inside a block: a tile of the
// own block's fp32 scores, 16*min(b*(a/t)*s^2, max(b*(a/t)*s, 2^20)), and
// per token of the rank its fp32 dq,
// the block's expanded keys and values, the output's gradient and dv in fp32
// (16h/t), the k/v block and the one arriving, their fp32 gradient and the
// partial one received (24c), the fp32 delta (4a/t), and the cp fp32 k/v
// gradients sent on, kept until the backward ends (8c*cp):
//   16*min(b*(a/t)*s^2, max(b*(a/t)*s, 2^20)) + s*b*(16h/t + (24 + 8cp)*c + 4a/t).
// 0 for cp = 1 and all-to-all, whose whole-sequence probabilities are kept
// (and counted) instead.
double transientAttentionBytes(const ModelDesc& m, double microBatch, int tp, int cp,
                               CpAlgorithm algorithm);

}  // namespace strata::plan
