#include "strata/plan/memory.h"

namespace strata::plan {

MemoryBreakdown modelStateBytes(double params, int dp, int zeroStage, const Precision& precision) {
  MemoryBreakdown out;
  out.parameters = params * precision.weightBytes / (zeroStage >= 3 ? dp : 1);
  out.gradients = params * precision.gradBytes / (zeroStage >= 2 ? dp : 1);
  out.optimizer = params * precision.optimizerBytes / (zeroStage >= 1 ? dp : 1);
  return out;
}

double workingActivationBytes(const ModelDesc& m, double microBatch, int tp,
                              bool sequenceParallel) {
  double s = m.seqLen, b = microBatch, h = m.hidden, a = m.heads, t = tp;
  double attention = 5 * a * s / (h * t);
  double perElement = sequenceParallel ? 34 / t + attention : 10 + 24 / t + attention;
  return s * b * h * perElement;
}

double stashedActivationBytes(const ModelDesc& m, double microBatch, int tp, bool sequenceParallel,
                              bool recompute) {
  if (!recompute) return workingActivationBytes(m, microBatch, tp, sequenceParallel);
  double input = 2.0 * m.seqLen * microBatch * m.hidden;
  return sequenceParallel ? input / tp : input;
}

}  // namespace strata::plan
