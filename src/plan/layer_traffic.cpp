#include "layer_traffic.h"

namespace strata::plan {
namespace {

// Korthikanti et al.'s count for GPT, 16-bit values, dropout masks of one
// byte.
double gptActivationBytes(const ModelDesc& m, double microBatch, int tp, bool sequenceParallel) {
  double s = m.seqLen, b = microBatch, h = m.hidden, a = m.heads, t = tp;
  double attention = 5 * a * s / (h * t);
  double perElement = sequenceParallel ? 34 / t + attention : 10 + 24 / t + attention;
  return s * b * h * perElement;
}

// The same count for a llama layer, per rank, 16-bit values. Llama has no
// dropout, so no masks, and the weighted sum over V reads the softmax's own
// output. RoPE's backward needs only its cos/sin tables (shared by the
// batch), so the k and q projections' outputs are kept only as rotated. K
// and V count at the query heads' width: Strata's attention expands each kv
// head to the query heads of its group (repeat_interleave) before the
// products, which keep the expanded copies. Grouped-query attention thus
// saves projection work and communication, not these activations.
double llamaActivationBytes(const ModelDesc& m, double microBatch, int tp, bool sequenceParallel) {
  double s = m.seqLen, b = microBatch, h = m.hidden, f = m.ffn, a = m.heads, t = tp;
  // Replicated over tp, or split along the sequence under sequence parallel:
  double replicated = 2 * h        // attention RMSNorm's input
                      + 2 * h      // its output, the q, k and v projections' shared input
                      + 2 * h      // MLP RMSNorm's input
                      + 2 * h;     // its output, gate's and up's shared input
  double split = 2 * h / t         // rotated Q, for the scores' backward
                 + 2 * h / t       // rotated K expanded to the query heads, for the scores
                 + 2 * h / t       // V expanded likewise, for the weighted sum's backward
                 + 2 * h / t       // the weighted sum, the o projection's input
                 + 2 * f / t       // gate's output, SiLU's input
                 + 2 * f / t       // SiLU's output, for up's gradient through the product
                 + 2 * f / t       // up's output, for the gate side's gradient through the product
                 + 2 * f / t;      // the product, down's input
  double softmax = 2 * a * s / t;  // the probabilities [b, a/t, s, s], per token
  return s * b * ((sequenceParallel ? replicated / t : replicated) + split + softmax);
}

// The tokens of every sequence a context-parallel rank holds (checkLayout
// makes S / cp whole).
double rankTokens(const ModelDesc& m, int cp) { return double(m.seqLen) / cp; }

// Bytes the whole-sequence path keeps per entry of the scores [b, a/t, s, s]:
// GPT's probabilities, dropout mask and dropped-out probabilities
// (Korthikanti's 5as/h), llama's probabilities.
double scoreEntryBytes(const ModelDesc& m) { return m.family == Family::kLlama ? 2 : 5; }

// A GPT layer on one of cp > 1 ranks under ring attention, s = S/cp tokens:
// Korthikanti's token-wise terms as at cp = 1 (the hidden
// dropout masks too, counted whatever the rate as at cp = 1, although the
// trainer refuses dropout under cp), and instead of the s x s terms the
// ring's own copy of its output and its fp32 log-sum-exp.
double gptRingBytes(const ModelDesc& m, double microBatch, int tp, bool sequenceParallel, int cp) {
  double s = rankTokens(m, cp), b = microBatch, h = m.hidden, a = m.heads, t = tp;
  double tokenwise = sequenceParallel ? 34 / t : 10 + 24 / t;
  double ring = 2 / t               // the output the ring saves, besides the projection's copy
                + 4 * a / (h * t);  // the log-sum-exp, one fp32 per head and token
  return s * b * h * (tokenwise + ring);
}

// A llama layer on one of cp > 1 ranks under ring attention: llamaActivationBytes's
// terms for s = S/cp tokens, but K and V as the ring keeps them and no probabilities.
double llamaRingBytes(const ModelDesc& m, double microBatch, int tp, bool sequenceParallel,
                      int cp) {
  double s = rankTokens(m, cp), b = microBatch, h = m.hidden, f = m.ffn, a = m.heads, t = tp;
  double c = kvColumnsPerRank(m, tp);
  double replicated = 8 * h;       // the two RMSNorms' inputs and outputs
  double attention = 2 * h / t     // rotated Q, saved by the ring
                     + 4 * c       // rotated K and V, unrepeated: only kv heads travel and stay
                     + 2 * h / t   // the ring's output
                     + 2 * h / t   // the o projection's input
                     + 4 * a / t;  // the fp32 log-sum-exp
  double mlp = 8 * f / t;          // gate, SiLU, up and product
  return s * b * ((sequenceParallel ? replicated / t : replicated) + attention + mlp);
}

// A dense layer's.
double denseWorkingBytes(const ModelDesc& m, double microBatch, int tp, bool sequenceParallel,
                         int cp, CpAlgorithm algorithm) {
  bool llama = m.family == Family::kLlama;
  // All-to-all runs the whole-sequence path on a/(t cp) heads: the same
  // tensors as cp = 1, a cp-th of each.
  if (cp > 1 && algorithm == CpAlgorithm::kAllToAll)
    return denseWorkingBytes(m, microBatch, tp, sequenceParallel, 1, algorithm) / cp;
  if (cp > 1)
    return llama ? llamaRingBytes(m, microBatch, tp, sequenceParallel, cp)
                 : gptRingBytes(m, microBatch, tp, sequenceParallel, cp);
  if (llama) return llamaActivationBytes(m, microBatch, tp, sequenceParallel);
  return gptActivationBytes(m, microBatch, tp, sequenceParallel);
}

// An MoE layer's MLP a token of the rank, in place of the SwiGLU's 8f/t:
// the router's fp32 input, logits and probabilities, each assignment's row
// dispatched and brought back and its expert's four products, and the
// shared experts' SwiGLU.
double moeMlpBytesPerToken(const ModelDesc& m, int tp) {
  const MoeDesc& moe = m.moe;
  double h = m.hidden, t = tp, e = moe.experts, ef = moe.expertFfn;
  double router = 4 * h             // the input in fp32, the router's matmul's
                  + 4 * e           // the fp32 logits, for the z-loss
                  + 4 * e;          // the fp32 probabilities, for softmax's backward and the gates
  double assignment = 2 * h         // the dispatched row, gate's and up's input
                      + 8 * ef / t  // the expert's gate, SiLU, up and product
                      + 2 * h;      // the row brought back, for its gate's gradient
  double shared = 8 * moe.sharedExperts * ef / t;
  return router + moe.topK * assignment + shared;
}

}  // namespace

double layerTrafficBytes(const ModelDesc& m, double microBatch, int tp, bool sequenceParallel,
                         int cp, CpAlgorithm algorithm, LayerKind kind) {
  double dense = denseWorkingBytes(m, microBatch, tp, sequenceParallel, cp, algorithm);
  if (kind == LayerKind::kDense) return dense;
  double tokens = microBatch * rankTokens(m, cp);
  return dense + tokens * (moeMlpBytesPerToken(m, tp) - 8.0 * m.ffn / tp);
}

double scoreTrafficBytes(const ModelDesc& m, double microBatch, int tp) {
  double s = m.seqLen;
  return scoreEntryBytes(m) * microBatch * (double(m.heads) / tp) * s * s;
}

}  // namespace strata::plan
