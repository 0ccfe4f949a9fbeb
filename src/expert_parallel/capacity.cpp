#include "capacity.h"

#include <torch/torch.h>

#include <cmath>

namespace strata::expert_parallel::detail {

int64_t expertCapacity(double factor, int64_t sequenceLength, int64_t topK, int64_t experts) {
  return static_cast<int64_t>(std::ceil(factor * static_cast<double>(sequenceLength * topK) /
                                        static_cast<double>(experts)));
}

at::Tensor acceptedAssignments(const at::Tensor& experts, const at::Tensor& positions,
                               int64_t capacity, int64_t numExperts, Communicator* cp) {
  int64_t s = experts.size(0), b = experts.size(1), k = experts.size(2);
  // The whole sequences' choices in position order: [S, b, k].
  at::Tensor whole = experts;
  if (cp != nullptr && cp->size() > 1) {
    at::Tensor allChoices = torch::empty({cp->size() * s, b, k}, experts.options());
    at::Tensor allPositions = torch::empty({cp->size() * s}, positions.options());
    cp->allGather(allChoices, experts.contiguous());
    cp->allGather(allPositions, positions.contiguous());
    whole = torch::empty_like(allChoices).index_copy_(0, allPositions, allChoices);
  }
  int64_t length = whole.size(0);
  // Per sequence, its assignments in (position, slot) order: [b, S k].
  at::Tensor ordered = whole.permute({1, 0, 2}).reshape({b, length * k});
  // How many earlier assignments of the sequence chose the same expert.
  at::Tensor oneHot = torch::one_hot(ordered, numExperts);                          // [b, S k, E]
  at::Tensor earlier = oneHot.cumsum(1) - oneHot;                                   // [b, S k, E]
  at::Tensor rank = earlier.gather(2, ordered.unsqueeze(2)).squeeze(2);             // [b, S k]
  at::Tensor accepted = (rank < capacity).view({b, length, k}).permute({1, 0, 2});  // [S, b, k]
  return accepted.index_select(0, positions);                                       // [s, b, k]
}

}  // namespace strata::expert_parallel::detail
