#include "strata/train/loop/grad_norm.h"

#include <torch/torch.h>

#include <cmath>

#include "strata/optim/sum_of_squares.h"

namespace strata::train {

namespace {

// Accumulated in float64 so millions of small squares keep their digits.
at::Tensor squares(const at::Tensor& values) { return optim::sumOfSquares(values); }

// Where the gradients live (a GPU when training on one), so that the sum is
// taken there and only the final norm crosses to the host.
at::Device deviceOf(const GradientTerms& gradients) {
  for (const ShardedNormTerm& chunk : gradients.sharded) return chunk.gradient.device();
  for (const NormTerm& term : gradients.terms)
    if (term.parameter.defined()) return term.parameter.device();
  return at::kCPU;
}

}  // namespace

double globalGradNorm(const GradientTerms& gradients, const NormGroups& groups) {
  at::Tensor sumSquares =
      torch::zeros({1}, at::TensorOptions(torch::kDouble).device(deviceOf(gradients)));
  for (const ShardedNormTerm& chunk : gradients.sharded)
    sumSquares += squares(chunk.gradient * chunk.counted);
  if (!gradients.sharded.empty()) groups.dp.allReduce(sumSquares);
  // A replica counted on another rank adds nothing, except a non-finite
  // value (0 x nan = nan), so that a nan or inf anywhere makes the norm
  // non-finite on every rank and every rank skips the step alike.
  auto addTerms = [](at::Tensor& sum, const std::vector<NormTerm>& terms) {
    for (const NormTerm& term : terms) {
      const at::Tensor& grad = term.parameter.grad();
      if (grad.defined()) sum += term.countHere ? squares(grad) : squares(grad) * 0;
    }
  };
  addTerms(sumSquares, gradients.terms);
  if (groups.ep != nullptr) {
    at::Tensor experts = torch::zeros_like(sumSquares);
    addTerms(experts, gradients.expertTerms);
    groups.ep->allReduce(experts);
    sumSquares += experts;
  }
  groups.tp.allReduce(sumSquares);
  groups.pp.allReduce(sumSquares);
  return std::sqrt(sumSquares.item<double>());
}

double clipGradNorm(const GradientTerms& gradients, double maxNorm, const NormGroups& groups) {
  double norm = globalGradNorm(gradients, groups);
  if (maxNorm <= 0) return norm;
  double scale = maxNorm / (norm + 1e-6);
  if (scale >= 1) return norm;
  for (const ShardedNormTerm& chunk : gradients.sharded) chunk.gradient.mul_(scale);
  for (const auto* terms : {&gradients.terms, &gradients.expertTerms})
    for (const NormTerm& term : *terms) {
      at::Tensor grad = term.parameter.grad();
      if (grad.defined()) grad.mul_(scale);
    }
  return norm;
}

}  // namespace strata::train
