#include "strata/plan/memory.h"

namespace strata::plan {

MemoryBreakdown modelStateBytes(double params, int dp, int zeroStage, const Precision& precision) {
  MemoryBreakdown out;
  out.parameters = params * precision.weightBytes / (zeroStage >= 3 ? dp : 1);
  out.gradients = params * precision.gradBytes / (zeroStage >= 2 ? dp : 1);
  out.optimizer = params * precision.optimizerBytes / (zeroStage >= 1 ? dp : 1);
  return out;
}

namespace {

// Korthikanti et al.'s count for GPT (memory.h), 16-bit values, dropout masks
// of one byte.
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

}  // namespace

double workingActivationBytes(const ModelDesc& m, double microBatch, int tp,
                              bool sequenceParallel) {
  if (m.family == Family::kLlama) return llamaActivationBytes(m, microBatch, tp, sequenceParallel);
  return gptActivationBytes(m, microBatch, tp, sequenceParallel);
}

double stashedActivationBytes(const ModelDesc& m, double microBatch, int tp, bool sequenceParallel,
                              bool recompute) {
  if (!recompute) return workingActivationBytes(m, microBatch, tp, sequenceParallel);
  double input = 2.0 * m.seqLen * microBatch * m.hidden;
  return sequenceParallel ? input / tp : input;
}

}  // namespace strata::plan
