// Bytes one rank needs: model state (parameters, gradients, optimizer state
// under each ZeRO stage), activations, and the buffers around them. Every
// term counts what Strata's trainer allocates (tests/trainer's
// memory_prediction_test measures it against LibTorch's CPU allocator);
// docs/planner.md has the table.
//
// Model state per rank, for P parameters on the rank (its tp share, with
// the norms and row-parallel biases whole) and a data-parallel group of dp,
// with w, g, o bytes per parameter for weights, gradients and optimizer
// state (bf16 AdamW: 2 + 2 + 12, the fp32 master copy, momentum and variance
// making the 12; strata train: 4 + 4 + 8, fp32 weights and AdamW moments):
//   ZeRO 0: P(w + g + o)
//   ZeRO 1: P(w + g) + Po/dp + Pw
//   ZeRO 2: P(w + g) + P(g + o)/dp + Pw + Pw/dp
//   ZeRO 3: P(w + g + o)/dp + Pw/dp
// where ZeRO-1 and 2 keep a flat copy of the parameters that the sharded
// optimizer updates and all-gathers (Pw, zero_optimizer.h), ZeRO-2 keeps
// the whole flat gradient that autograd accumulates into besides the
// averaged chunks it reduce-scatters to, and ZeRO-2 and 3 weigh each chunk
// element for the global norm (Pw/dp, grad_norm.h). (Under context
// parallelism the group is dp x cp: Layout::replicas(); under expert
// parallelism a rank's experts are sharded over their own, smaller group,
// dp x cp / ep: Layout::expertReplicas().) A pipeline rank holds its own
// stages' weights only: the builder empties other stages' blocks as it makes
// them, and the trainer releases the rest once the pipeline is cut
// (pipeline/held_layers.h).
//
// Activations per layer and micro-batch of b sequences of s tokens follow
// Korthikanti et al. 2022, "Reducing Activation Recomputation in Large
// Transformer Models", Table 2, counted tensor by tensor as Strata's layers
// keep them, each value of the activation type (Precision::activationBytes:
// 2 under 16-bit autocast, 4 in fp32), with heads a, tensor parallel t,
// ffn f. A token keeps (values):
//   GPT:    4h + (4h + 2f)/t + a*s/t
//             the block's two sums and its norms' outputs; the fused q, k, v
//             output and the output projection's input; fc1's and GELU's
//             outputs; the probabilities
//           + 2h + 2a*s/t with dropout (ModelDesc::dropout): the masks,
//             float like the values, and the dropped-out probabilities
//   Llama:  4h + (4h + 3f)/t + a*s/t, and the two sums at 4 bytes
//             whatever the activation type: a RMSNorm computes in fp32 and
//             keeps its input so (under 16-bit autocast the residual stream
//             is fp32 anyway), and x/rms besides its output; rotated q,
//             k and v expanded to the query heads (grouped-query attention
//             saves projections and traffic, not these); gate, up and their
//             product (ops::swiglu recomputes silu(gate) rather than keep it)
// and besides the values: the norms' fp32 statistics (8 bytes a token for
// GPT, 4 for llama, a norm), the bool causal mask [s, s], llama's RoPE
// tables (2*s*d values) and repeat indices. With sequence parallel the
// residual stream's tensors hold s/t tokens, but the attention's and the
// MLP's gathered inputs stay whole (2h a token).
//
// An MoE layer (either family; never sequence parallel, which the trainer
// refuses with MoE) keeps, in place of the dense MLP's, with E experts,
// top_k k, expert width ef and S shared experts (moe_mlp.cpp), a token:
//   each assignment    its row dispatched, out of its expert and combined
//                      back (3h) and the expert's gate, up and product
//                      (3ef/t)
//   shared experts     one SwiGLU of S*ef: 3*S*ef/t
//   the router         fp32 logits, probabilities and their copy for the
//                      losses, int64 orders and weights: 12E + 24k + 32 bytes
// With balanced routing a rank's experts take k rows a token of its own,
// whatever ep.
//
// LoRA (ModelDesc::lora: adapters on a frozen llama) keeps what the
// adapters' gradients need and no more. The base's weights stay (4 bytes
// each as strata train keeps them) without gradients or optimizer state,
// which the adapters alone have, sharded by ZeRO-1 and 2 as any trained
// weights. A frozen matmul keeps nothing for its weight's gradient, so a
// matmul input is kept only where an adapter reads it (the attention norm's
// output for q, k or v, the MLP norm's for gate or up, o's input, down's
// input the SwiGLU product), a RMSNorm keeps no x/rms, each adapter keeps
// x A^T (r values), the frozen embedding keeps nothing and the frozen head
// no weight's gradient. A stage's backward then peaks inside a SwiGLU's
// backward, six [tokens, ffn/t] tensors (stage_memory.cpp), rather than
// at the forward's end. tests/trainer's memory_prediction_test measures
// LoRA's layouts beside the others.
//
// Context parallelism (cp > 1) gives a rank s = S/cp tokens of every
// sequence of S, and every token-wise term above counts those s. Attention
// keeps what its algorithm keeps (strata/context_parallel/):
//   ring        instead of the probabilities and the mask, its output (h/t)
//               and its fp32 log-sum-exp (4a/t bytes); llama's k and v as
//               they travel, at the c columns of kv heads a tp rank
//               computes (2c, not 2h/t expanded). While a layer runs its
//               backward, one tile of a block's scores lives in fp32
//               (transientAttentionBytes): the rank's own block,
//               [b, a/t, s, s], a tile of query rows at a time of at most
//               2^20 entries (one row at least), at 16 bytes an entry
//               (blockBackward holds the probabilities, their gradient, the
//               scores' gradient and a temporary at once), with the ring's
//               fp32 working tensors and the k/v gradients it sends.
//   all-to-all  the whole-sequence path on a/(t cp) heads: per token of the
//               rank what cp = 1 keeps, with the whole mask and the
//               sequence's int64 order twice.
// The trainer refuses dropout under cp.
//
// A rank's peak over a step (rank_memory.cpp, cost_model.h) walks its
// schedule's actions: the stages' stashes, the hand-offs its sends still
// hold (held_sends.h), the head's and each backward's working tensors, and
// after the pipeline the global norm's and the optimizer's temporaries.
// Nothing here throws.
#pragma once

#include "strata/plan/layout.h"
#include "strata/plan/model_desc.h"

namespace strata::plan {

struct Precision {
  double weightBytes = 2;
  double gradBytes = 2;
  double optimizerBytes = 12;
  double activationBytes = 2;  // a kept activation value
};

// Bytes by what holds them, at the moment a rank peaks.
struct MemoryBreakdown {
  double parameters = 0;
  double gradients = 0;
  double optimizer = 0;
  double activations = 0;  // the stashes kept for backward
  // Everything else live then: hand-offs kept for the step, the batch,
  // working tensors of the running forward or backward (the fused head's
  // chunk, gradients before they accumulate), or after the pipeline the
  // global norm's and the optimizer's temporaries.
  double buffers = 0;
  double total() const { return parameters + gradients + optimizer + activations + buffers; }
};

// Parameters, gradients and optimizer state of `params` parameters on a rank.
MemoryBreakdown modelStateBytes(double params, int dp, int zeroStage, const Precision& precision);

// Activation bytes one layer stashes per micro-batch between its forward and
// its backward, on a rank of a `cp`-rank context-parallel group: all it
// keeps, or under `recompute` (per-layer checkpointing, as Megatron-LM's
// full recompute) only its input.
double stashedActivationBytes(const ModelDesc& m, double microBatch, int tp, bool sequenceParallel,
                              bool recompute, int cp = 1,
                              CpAlgorithm algorithm = CpAlgorithm::kRing,
                              LayerKind kind = LayerKind::kDense, double valueBytes = 2);
// Activation bytes one layer holds while it runs its backward (its full set,
// rebuilt by the recompute when there is one).
double workingActivationBytes(const ModelDesc& m, double microBatch, int tp, bool sequenceParallel,
                              int cp = 1, CpAlgorithm algorithm = CpAlgorithm::kRing,
                              LayerKind kind = LayerKind::kDense, double valueBytes = 2);
// A layer's input (the hand-off between stages): b*(S/cp)*h values, 1/t of
// them under sequence parallel.
double layerInputBytes(const ModelDesc& m, double microBatch, int tp, bool sequenceParallel,
                       int cp = 1, double valueBytes = 2);
// The MoE MLP's values a token of a rank keeps (above): k*(3h + 4ef/t) +
// 4*S*ef/t; and its router's fixed-width bytes a token: 12E + 24k + 32.
double moeMlpValuesPerToken(const ModelDesc& m, int tp);
double moeRouterBytesPerToken(const ModelDesc& m);
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
