#include "strata/plan/memory.h"

#include <algorithm>
#include <initializer_list>

namespace strata::plan {

MemoryBreakdown modelStateBytes(double params, int dp, int zeroStage, const Precision& precision) {
  double w = precision.weightBytes, g = precision.gradBytes, o = precision.optimizerBytes;
  MemoryBreakdown out;
  out.parameters = params * w / (zeroStage >= 3 ? dp : 1);
  out.gradients = params * g / (zeroStage >= 3 ? dp : 1);
  out.optimizer = params * o / (zeroStage >= 1 ? dp : 1);
  if (zeroStage == 1 || zeroStage == 2) out.parameters += params * w;  // the flat copy
  // ZeRO-2's averaged chunks beside the whole flat gradient.
  if (zeroStage == 2) out.gradients += params * g / dp;
  return out;
}

namespace {

// A layer's activations on a rank a micro-batch: per token of the rank
// `values` at the activation width and `bytes` at a fixed width (fp32
// statistics, int64 indices), and per micro-batch, whatever its sequences,
// `fixedValues` and `fixedBytes`.
struct Kept {
  double values = 0;
  double bytes = 0;
  double fixedValues = 0;
  double fixedBytes = 0;
  double total(double tokens, double valueBytes) const {
    return tokens * (values * valueBytes + bytes) + fixedValues * valueBytes + fixedBytes;
  }
};

// The tokens of every sequence a context-parallel rank holds (checkLayout
// makes S / cp whole).
double tokensOnRank(const ModelDesc& m, int cp) { return double(m.seqLen) / cp; }

bool isLlama(const ModelDesc& m) { return m.family == Family::kLlama; }

// Under LoRA (ModelDesc::lora) the base is frozen, and a frozen matmul
// keeps nothing for its weight's gradient: an input that only frozen
// matmuls read is not kept. It is when one of `readers` carries an adapter,
// whose A reads it (or always, without LoRA), unless the adapters' dropout
// hands A a masked copy instead (adapterValues counts those).
bool inputKept(const ModelDesc& m, std::initializer_list<LoraTarget> readers) {
  if (!m.lora.enabled) return true;
  if (m.lora.dropout) return false;
  for (LoraTarget target : readers)
    if (m.lora.adapts(target)) return true;
  return false;
}

// The hidden-sized values the residual stream keeps a token: the block's
// two sums (after attention; its output, the next layer's input), a
// RMSNorm's x / rms before the weight (which a frozen weight's multiply
// does not keep), and each norm's output, the next matmuls' input. Under
// sequence parallel the sums and the norms' own tensors hold 1/t of the
// tokens, and the matmuls' inputs gathered from the norms' outputs are
// kept whole. Llama's sums are counted in residualSumBytes instead.
double residualValues(const ModelDesc& m, int tp, bool sequenceParallel) {
  double h = m.hidden;
  double inside = isLlama(m) && !m.lora.enabled ? h : 0;  // a norm's own tensor, x/rms
  double outputs = h * (inputKept(m, {LoraTarget::kQ, LoraTarget::kK, LoraTarget::kV}) +
                        inputKept(m, {LoraTarget::kGate, LoraTarget::kUp}));
  double own = (isLlama(m) ? 0 : 2 * h) + 2 * inside;
  return (sequenceParallel ? own / tp : own) + outputs;
}

// Llama's two sums a token, in bytes: its RMSNorm computes in fp32 and
// keeps its input so (ops: x.to(float), whose pow and product keep it), and
// under 16-bit autocast the residual stream is fp32 anyway (the fp32
// embedding plus 16-bit products), so 4 bytes a value whatever the
// activations' type; 1/t of them under sequence parallel.
double residualSumBytes(const ModelDesc& m, int tp, bool sequenceParallel) {
  if (!isLlama(m)) return 0;
  return 2 * 4.0 * m.hidden / (sequenceParallel ? tp : 1);
}

// LoRA's adapters a token: each keeps x A^T, r values (the whole r on
// every tp rank; a row-parallel target's partial product). With dropout
// each also keeps its masked input and its mask, two of its input's width:
// the hidden size for q, k, v, gate and up (whole on every tp rank), the
// rank's columns for o and down.
double adapterValues(const ModelDesc& m, int tp) {
  if (!m.lora.enabled) return 0;
  double values = double(m.lora.rank) * m.lora.targets.size();
  if (!m.lora.dropout) return values;
  for (LoraTarget target : m.lora.targets) {
    double width = target == LoraTarget::kO      ? double(m.hidden) / tp
                   : target == LoraTarget::kDown ? double(m.ffn) / tp
                                                 : double(m.hidden);
    values += 2 * width;
  }
  return values;
}

// The norms' fp32 statistics a token, two norms a layer: LayerNorm's mean
// and 1/std, RMSNorm's 1/rms.
double normStatBytes(const ModelDesc& m, int tp, bool sequenceParallel) {
  double perNorm = isLlama(m) ? 4 : 8;
  return 2 * perNorm / (sequenceParallel ? tp : 1);
}

// The attention's projections a token, each 1/t of the heads: GPT's fused
// q, k and v output (whose views the products keep) and the output
// projection's input; llama's rotated q, its rotated k and v expanded to
// the query heads (copies, the products keep them rather than the kv
// heads) and the output projection's input (under LoRA when o is adapted).
double projectionValues(const ModelDesc& m, int tp) {
  return (3.0 + inputKept(m, {LoraTarget::kO})) * m.hidden / tp;
}

// The dense MLP a token: GPT's fc1 and GELU outputs, llama's gate, up and
// their product (ops::swiglu keeps gate and up, not silu(gate); the
// product is down's input, kept under LoRA when down is adapted), and the
// adapters' values.
double denseMlpValues(const ModelDesc& m, int tp) {
  if (!isLlama(m)) return 2.0 * m.ffn / tp;
  return (2.0 + inputKept(m, {LoraTarget::kDown})) * m.ffn / tp;
}

// A whole-sequence layer (cp = 1) on one of tp ranks. GPT's attention
// (ops::causalSelfAttention, or the written-out form under dropout) keeps
// the softmax's probabilities and reads a causal mask; llama's goes through
// LibTorch's fused kernel (at::scaled_dot_product_attention, flash attention
// on the CPU too), which keeps its output and an fp32 log-sum-exp instead.
Kept wholeSequenceLayer(const ModelDesc& m, int tp, bool sequenceParallel) {
  double s = m.seqLen, h = m.hidden, a = m.heads, t = tp;
  Kept kept;
  kept.values = residualValues(m, tp, sequenceParallel) + projectionValues(m, tp) +
                denseMlpValues(m, tp) + adapterValues(m, tp);
  kept.bytes = normStatBytes(m, tp, sequenceParallel) + residualSumBytes(m, tp, sequenceParallel);
  if (isLlama(m)) {
    kept.values += h / t;     // the fused kernel's output, besides the o projection's copy
    kept.bytes += 4 * a / t;  // its log-sum-exp, one fp32 a head
    kept.fixedValues = 2 * s * m.headDim();  // RoPE's cos and sin tables
    // Each rank repeats its kv heads to its query heads when fewer (the
    // repeat's int64 indices, one a query head, for k and for v).
    double kvHeads = kvReplicated(m, tp) ? 1 : m.keyValueHeads() / t;
    if (kvHeads < a / t) kept.fixedBytes += 2 * 8 * a / t;
  } else {
    kept.values += a * s / t;  // the softmax's probabilities
    kept.fixedBytes = s * s;   // the causal mask, bool [s, s]
    if (m.dropout) {
      // Strata's dropout masks are values of the activation's type (dropout.h):
      // the two hidden dropouts' (drawn whole under sequence parallel, the
      // rank's slice a view of it) and the attention's, with the dropped-out
      // probabilities the product with V reads.
      kept.values += 2 * h + 2 * a * s / t;
    }
  }
  return kept;
}

// Ring attention's layer on one of cp ranks: the whole-sequence layer's
// token-wise tensors for its S/cp tokens, and in place of the scores its
// own output and fp32 log-sum-exp (no mask: the ring masks blocks as it
// goes). Llama's ring keeps k and v as they travel, at the kv heads' width
// c, rather than expanded.
Kept ringLayer(const ModelDesc& m, int tp, bool sequenceParallel, int cp) {
  double h = m.hidden, a = m.heads, t = tp;
  Kept kept;
  double attention = projectionValues(m, tp) + h / t;  // and the ring's output
  if (isLlama(m)) attention += 2 * kvColumnsPerRank(m, tp) - 2 * h / t;
  kept.values = residualValues(m, tp, sequenceParallel) + attention + denseMlpValues(m, tp) +
                adapterValues(m, tp);
  kept.bytes = normStatBytes(m, tp, sequenceParallel) + residualSumBytes(m, tp, sequenceParallel) +
               4 * a / t;
  if (isLlama(m)) kept.fixedValues = 2 * tokensOnRank(m, cp) * m.headDim();  // RoPE's tables
  return kept;
}

// All-to-all attention runs the whole-sequence path on a/(t cp) heads: a
// cp-th of every token-wise and score-sized tensor, but GPT's whole causal
// mask and the sequence's int64 positions twice (its order and inverse).
Kept allToAllLayer(const ModelDesc& m, int tp, bool sequenceParallel, int cp) {
  Kept kept = wholeSequenceLayer(m, tp, sequenceParallel);
  kept.fixedBytes += 16.0 * m.seqLen;
  kept.fixedValues /= cp;  // RoPE rotates the rank's own tokens
  return kept;
}

// A dense layer's activations a micro-batch of b sequences, on the rank's
// S/cp tokens of each.
double denseLayerBytes(const ModelDesc& m, double microBatch, int tp, bool sequenceParallel, int cp,
                       CpAlgorithm algorithm, double valueBytes) {
  double tokens = microBatch * tokensOnRank(m, cp);
  if (cp == 1) return wholeSequenceLayer(m, tp, sequenceParallel).total(tokens, valueBytes);
  if (algorithm == CpAlgorithm::kRing)
    return ringLayer(m, tp, sequenceParallel, cp).total(tokens, valueBytes);
  // The token-wise tensors hold the rank's tokens; the scores a cp-th of
  // the whole sequence's, which per token of the rank is what cp = 1 keeps.
  return allToAllLayer(m, tp, sequenceParallel, cp).total(tokens, valueBytes);
}

// Bytes of one fp32 entry of a ring block's scores while blockBackward runs:
// the probabilities, their gradient, the scores' gradient and the temporary
// between them (block_attention.cpp), 4 bytes each.
constexpr double kRingBlockScoreBytes = 16;
// block_attention.cpp computes a block's scores a tile of query rows at a
// time, each tile of [b, heads/tp, rows, keys] at most this many entries
// (but one query row whatever its length).
constexpr double kRingTileElements = 1 << 20;

}  // namespace

double moeMlpValuesPerToken(const ModelDesc& m, int tp) {
  const MoeDesc& moe = m.moe;
  double h = m.hidden, t = tp, ef = moe.expertFfn;
  double assignment = 3 * h          // its row dispatched, out of its expert, and combined back
                      + 3 * ef / t;  // the expert's gate, up and product
  return moe.topK * assignment + 3.0 * moe.sharedExperts * ef / t;
}

double moeRouterBytesPerToken(const ModelDesc& m) {
  double e = m.moe.experts, k = m.moe.topK;
  return 12 * e    // the fp32 logits, probabilities and their copy for the losses
         + 24 * k  // int64 per assignment: its exchange order, dispatch and combine weights
         + 32;     // int64 and fp32 a token: the top expert, combine's order, the losses'
}

double workingActivationBytes(const ModelDesc& m, double microBatch, int tp, bool sequenceParallel,
                              int cp, CpAlgorithm algorithm, LayerKind kind, double valueBytes) {
  double dense = denseLayerBytes(m, microBatch, tp, sequenceParallel, cp, algorithm, valueBytes);
  if (kind == LayerKind::kDense) return dense;
  // An MoE layer keeps its MLP's in place of the dense MLP's.
  double tokens = microBatch * tokensOnRank(m, cp);
  double mlp = (moeMlpValuesPerToken(m, tp) - denseMlpValues(m, tp)) * valueBytes +
               moeRouterBytesPerToken(m);
  return dense + tokens * mlp;
}

double layerInputBytes(const ModelDesc& m, double microBatch, int tp, bool sequenceParallel, int cp,
                       double valueBytes) {
  double tokens = microBatch * tokensOnRank(m, cp);
  return tokens * m.hidden * valueBytes / (sequenceParallel ? tp : 1);
}

double stashedActivationBytes(const ModelDesc& m, double microBatch, int tp, bool sequenceParallel,
                              bool recompute, int cp, CpAlgorithm algorithm, LayerKind kind,
                              double valueBytes) {
  if (recompute) return layerInputBytes(m, microBatch, tp, sequenceParallel, cp, valueBytes);
  return workingActivationBytes(m, microBatch, tp, sequenceParallel, cp, algorithm, kind,
                                valueBytes);
}

double transientAttentionBytes(const ModelDesc& m, double microBatch, int tp, int cp,
                               CpAlgorithm algorithm) {
  if (cp == 1 || algorithm != CpAlgorithm::kRing) return 0;
  double s = tokensOnRank(m, cp), b = microBatch, h = m.hidden, a = m.heads, t = tp;
  double c = kvColumnsPerRank(m, tp);
  // Ring attention's backward (ring_attention.cpp) at its peak, inside the
  // blockBackward of the rank's own block, [b, a/t, s, s] a tile of rows
  // at a time: its scores,
  double block = b * (a / t) * s * s, row = b * (a / t) * s;
  double scores = kRingBlockScoreBytes * std::min(block, std::max(row, kRingTileElements));
  // and, a token of the rank,
  double perToken = 4 * h / t     // the fp32 dq accumulator
                    + 4 * h / t   // the block's keys and values expanded to the query heads
                    + 8 * h / t   // the output's gradient and dv, fp32
                    + 8 * c       // the k/v block computed on and the one arriving
                    + 16 * c      // its fp32 gradient and the partial one received
                    + 4 * a / t;  // the fp32 delta, one a head
  // Every step's fp32 k/v gradient sent on stays alive until the backward
  // ends: cp of them, 8c a token of the rank each.
  double sent = cp * 8 * c;
  return scores + s * b * (perToken + sent);
}

}  // namespace strata::plan
