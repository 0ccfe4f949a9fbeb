// The router: which experts each token goes to, and with what gate.
//
//   logits = tokens W^T            [T, E], float32 whatever autocast says
//   probabilities = softmax(logits)
//   experts = the top_k by probability, best first; ties go to the lower
//             expert index (a stable sort), the same on every layout
//   weights = their probabilities, rescaled to sum to 1 with normalizeTopK
//
// Nothing here communicates.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

namespace strata::expert_parallel::detail {

struct Routing {
  at::Tensor logits;         // [T, E] float32
  at::Tensor probabilities;  // [T, E] float32
  at::Tensor experts;        // [T, k] int64
  at::Tensor weights;        // [T, k] float32, differentiable
};

// tokens [T, hidden], weight [E, hidden].
Routing route(const at::Tensor& tokens, const at::Tensor& weight, int64_t topK, bool normalizeTopK);

}  // namespace strata::expert_parallel::detail
