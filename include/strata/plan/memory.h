// Bytes one rank needs: model state (parameters, gradients, optimizer state
// under each ZeRO stage) and activations.
//
// Model state per rank, for P parameters on the rank (already divided by tp)
// and a data-parallel group of dp, with w, g, o bytes per parameter for
// weights, gradients and optimizer state (bf16 AdamW: 2 + 2 + 12, the fp32
// master copy, momentum and variance making the 12):
//   ZeRO 0: P(w + g + o)         ZeRO 2: Pw + P(g + o)/dp
//   ZeRO 1: P(w + g) + Po/dp     ZeRO 3: P(w + g + o)/dp
// Activations per layer and micro-batch of b sequences follow Korthikanti et
// al. 2022, "Reducing Activation Recomputation in Large Transformer Models",
// Table 2 (16-bit activations, a heads, tensor parallel size t):
//   tensor parallel:                  s*b*h*(10 + 24/t + 5*a*s/(h*t))
//   tensor + sequence parallel:       s*b*h*(34/t + 5*a*s/(h*t))
//   full recompute (only the input):  2*s*b*h      (2*s*b*h/t with sequence parallel)
// The llama family's, counted the same way term by term (memory.cpp), with
// ffn f and c = the k/v columns a tp rank computes (kv/t when t divides the
// kv heads, one head's d when they are replicated):
//   tensor parallel:                  s*b*(8h + (4h + 8f)/t + 4c) + 2*a*s^2*b/t
//   tensor + sequence parallel:       s*b*((12h + 8f)/t + 4c) + 2*a*s^2*b/t
//   full recompute:                   as GPT's
// Nothing here throws.
#pragma once

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
// its backward.
double stashedActivationBytes(const ModelDesc& m, double microBatch, int tp, bool sequenceParallel,
                              bool recompute);
// Activation bytes one layer holds while it runs its backward (its full set,
// rebuilt by the recompute when there is one).
double workingActivationBytes(const ModelDesc& m, double microBatch, int tp, bool sequenceParallel);

}  // namespace strata::plan
