#include "strata/train/grad_norm.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>

#include "strata/optim/sum_of_squares.h"

namespace strata::train {

namespace {

// Where the gradients live (a GPU when training on one), so that the sum is
// taken there and only the final norm crosses to the host.
at::Device deviceOf(const GradientTerms& gradients) {
  for (const ShardedNormTerm& chunk : gradients.sharded) return chunk.gradient.device();
  for (const NormTerm& term : gradients.terms)
    if (term.parameter.defined()) return term.parameter.device();
  return at::kCPU;
}

// A sum of squares in float64, so that millions of small squares keep their
// digits: a host double for CPU gradients (no tensor a term: a model has
// hundreds), a tensor on the gradients' device otherwise. A term not counted
// here adds nothing, except a non-finite value (0 x nan = nan), so that a
// nan or inf anywhere makes the norm non-finite on every rank and every rank
// skips the step alike.
class SquareSum {
 public:
  explicit SquareSum(at::Device device) : device_(device) {}

  void add(const at::Tensor& values, bool counted) {
    if (device_.is_cpu()) {
      double squares = optim::sumOfSquaresOnHost(values);
      host_ += counted ? squares : squares * 0;
      return;
    }
    at::Tensor squares = optim::sumOfSquares(values);
    if (!counted) squares = squares * 0;
    onDevice_ = onDevice_.defined() ? onDevice_ + squares : squares;
  }

  // The sum as a 1-element float64 tensor on the device, for all-reduces.
  at::Tensor total() const {
    at::Tensor sum = at::full({1}, host_, at::TensorOptions(at::kDouble).device(device_));
    return onDevice_.defined() ? sum + onDevice_ : sum;
  }

 private:
  at::Device device_;
  double host_ = 0;
  at::Tensor onDevice_;
};

void addTerms(SquareSum& sum, const std::vector<NormTerm>& terms) {
  for (const NormTerm& term : terms) {
    const at::Tensor& grad = term.parameter.grad();
    if (grad.defined()) sum.add(grad, term.countHere);
  }
}

}  // namespace

ShardedNormTerm shardedNormTerm(at::Tensor chunk, int64_t chunkStart,
                                std::vector<FlatSpan> notCounted) {
  std::sort(notCounted.begin(), notCounted.end(),
            [](const FlatSpan& a, const FlatSpan& b) { return a.offset < b.offset; });
  ShardedNormTerm term{std::move(chunk), {}};
  int64_t end = term.gradient.numel();
  auto append = [&](int64_t from, int64_t to, bool counted) {
    if (to <= from) return;
    if (!term.runs.empty() && term.runs.back().counted == counted) {
      term.runs.back().numel += to - from;
    } else {
      term.runs.push_back({from, to - from, counted});
    }
  };
  int64_t at = 0;  // elements of the chunk already in a run
  for (const FlatSpan& span : notCounted) {
    int64_t from = std::clamp<int64_t>(span.offset - chunkStart, 0, end);
    int64_t to = std::clamp<int64_t>(span.offset + span.numel - chunkStart, 0, end);
    if (to <= from) continue;
    append(at, from, true);
    append(from, to, false);
    at = to;
  }
  append(at, end, true);
  return term;
}

double globalGradNorm(const GradientTerms& gradients, const NormGroups& groups) {
  at::Device device = deviceOf(gradients);
  SquareSum sharded(device);
  for (const ShardedNormTerm& chunk : gradients.sharded)
    for (const ChunkRun& run : chunk.runs)
      sharded.add(chunk.gradient.narrow(0, run.offset, run.numel), run.counted);
  at::Tensor sumSquares = sharded.total();
  if (!gradients.sharded.empty()) groups.dp.allReduce(sumSquares);
  SquareSum replicated(device);
  addTerms(replicated, gradients.terms);
  sumSquares += replicated.total();
  if (groups.ep != nullptr) {
    SquareSum experts(device);
    addTerms(experts, gradients.expertTerms);
    at::Tensor expertSquares = experts.total();
    groups.ep->allReduce(expertSquares);
    sumSquares += expertSquares;
  }
  groups.tp.allReduce(sumSquares);
  groups.pp.allReduce(sumSquares);
  return std::sqrt(sumSquares.item<double>());
}

double clipScale(double norm, double maxNorm) {
  if (maxNorm <= 0) return 1;
  double scale = maxNorm / (norm + 1e-6);
  return scale >= 1 ? 1 : scale;
}

void scaleGradients(const GradientTerms& gradients, double scale) {
  if (scale == 1) return;
  for (const ShardedNormTerm& chunk : gradients.sharded) chunk.gradient.mul_(scale);
  for (const auto* terms : {&gradients.terms, &gradients.expertTerms})
    for (const NormTerm& term : *terms) {
      at::Tensor grad = term.parameter.grad();
      if (grad.defined()) grad.mul_(scale);
    }
}

double clipGradNorm(const GradientTerms& gradients, double maxNorm, const NormGroups& groups) {
  double norm = globalGradNorm(gradients, groups);
  scaleGradients(gradients, clipScale(norm, maxNorm));
  return norm;
}

}  // namespace strata::train
