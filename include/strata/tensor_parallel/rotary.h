// Rotary position embeddings (RoPE, Su et al. 2021) as the Llama family
// uses them: each head's query and key, of dimension d, are rotated by
// angles that grow with the token's position p, so that the score q_i . k_j
// depends on the positions only through i - j.
//
//   inv_freq[i] = theta^(-2i / d),  i in [0, d/2)  (then scaled: rope_scaling.h)
//   angle[p, i] = p * inv_freq[i]
//   rope(x)[p]  = x[p] * cos(angle[p]) + rotate_half(x[p]) * sin(angle[p])
//   rotate_half([x1, x2]) = [-x2, x1]    (x1, x2: the two halves of d)
//
// The pairs rotated together are (i, i + d/2), the half-split convention
// of Hugging Face's Llama, rather than the adjacent (2i, 2i + 1) pairs of
// Meta's original code. Both are the same model up to a fixed permutation of
// each head's q and k rows; with the half split, Strata's q_proj and k_proj
// weights are Hugging Face's as they are, so importing and exporting Llama
// checkpoints permutes nothing.
//
// Pure tensor arithmetic: nothing blocks or communicates; rotaryTables
// throws ConfigError for an odd head dimension or scaling checkRopeScaling
// refuses.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

#include "strata/tensor_parallel/rope_scaling.h"

namespace strata::tensor_parallel {

struct RotaryTables {
  at::Tensor cos;  // [s, d] or [b, 1, s, d], angles' cosines, each half-dimension's twice
  at::Tensor sin;  // the same shape
};

// The tables for positions firstPosition .. firstPosition + s - 1, computed
// in float64 and returned in `like`'s type and device.
RotaryTables rotaryTables(int64_t s, int64_t headDim, double theta, const RopeScaling& scaling,
                          const at::Tensor& like, int64_t firstPosition = 0);

// The tables for the given positions [s] (int64, in any order): a
// context-parallel rank's tokens are not one contiguous run. Positions
// [b, s], each sequence's own (packed documents restart them), give tables
// [b, 1, s, d].
RotaryTables rotaryTablesAt(const at::Tensor& positions, int64_t headDim, double theta,
                            const RopeScaling& scaling, const at::Tensor& like);

// inv_freq [d/2] in float64, scaled as `scaling` says.
at::Tensor rotaryInverseFrequencies(int64_t headDim, double theta, const RopeScaling& scaling);

// x [b, heads, s, d] rotated by the tables' rows: same shape and type.
at::Tensor applyRotary(const at::Tensor& x, const RotaryTables& tables);

}  // namespace strata::tensor_parallel
