#include "strata/train/grad_norm.h"

#include <torch/torch.h>

#include <cmath>

namespace strata::train {

double globalGradNorm(const std::vector<NormTerm>& terms, Communicator& tp, Communicator& pp) {
  // Accumulated in float64 so millions of small squares keep their digits.
  at::Tensor sumSquares = torch::zeros({1}, torch::kDouble);
  for (const NormTerm& term : terms) {
    const at::Tensor& grad = term.parameter.grad();
    if (!term.countHere || !grad.defined()) continue;
    sumSquares += grad.to(torch::kDouble).pow(2).sum();
  }
  tp.allReduce(sumSquares);
  pp.allReduce(sumSquares);
  return std::sqrt(sumSquares.item<double>());
}

double clipGradNorm(const std::vector<NormTerm>& terms, double maxNorm, Communicator& tp,
                    Communicator& pp) {
  double norm = globalGradNorm(terms, tp, pp);
  if (maxNorm <= 0) return norm;
  double scale = maxNorm / (norm + 1e-6);
  if (scale >= 1) return norm;
  for (const NormTerm& term : terms) {
    at::Tensor grad = term.parameter.grad();
    if (grad.defined()) grad.mul_(scale);
  }
  return norm;
}

}  // namespace strata::train
