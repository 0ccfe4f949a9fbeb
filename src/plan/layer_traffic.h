// Internal: the bytes a layer's element-wise work (norms, softmax, GELU or
// SiLU, dropout, residual adds) writes and the next operation reads once,
// which the time model prices at the device's memory bandwidth
// (stage_costs.cpp). The count is Korthikanti et al.'s Table 2 (2022) of a
// fused Megatron-style layer: 16-bit values, 1-byte dropout masks (kept
// whatever the rate), per layer and micro-batch of b sequences on a rank of
// tp and cp:
//   GPT:    s*b*h*(10 + 24/t + 5*a*s/(h*t))   (sequence parallel: 34/t + ...)
//   Llama:  s*b*(8h + (8h + 8f)/t) + 2*a*s^2*b/t
// ring attention's token-wise terms on S/cp tokens with its output and fp32
// log-sum-exp in place of the scores, all-to-all's a cp-th of cp = 1's,
// and an MoE layer's MLP in place of the SwiGLU's. The planner's time was
// calibrated with this count (cluster_presets.cpp); what the trainer keeps
// in memory is memory.h's.
#pragma once

#include "strata/plan/layout.h"
#include "strata/plan/model_desc.h"

namespace strata::plan {

double layerTrafficBytes(const ModelDesc& m, double microBatch, int tp, bool sequenceParallel,
                         int cp, CpAlgorithm algorithm, LayerKind kind);
// The score-sized part of cp = 1's count: per entry of [b, a/t, S, S], GPT's 5
// bytes (probabilities, dropout mask and dropped-out probabilities) or
// llama's 2 (probabilities).
double scoreTrafficBytes(const ModelDesc& m, double microBatch, int tp);

}  // namespace strata::plan
