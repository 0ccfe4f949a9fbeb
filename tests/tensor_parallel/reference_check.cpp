#include "reference_check.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <vector>

namespace strata::tensor_parallel::testing {
namespace {

// The serial tensor of a tensor split as `sharding`.
at::Tensor gatherSharded(const at::Tensor& local, Sharding sharding, Communicator& tp) {
  switch (sharding) {
    case Sharding::kSequence:
      return gatherAlong(local, 0, tp);
    case Sharding::kLastDim:
      return gatherAlong(local, local.dim() - 1, tp);
    case Sharding::kReplicated:
      break;
  }
  return local;
}

std::vector<std::string> namesOf(const torch::nn::Module& layer) {
  std::vector<std::string> names;
  for (const auto& param : layer.named_parameters()) names.push_back(param.key());
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<std::string> namesOf(const std::map<std::string, int64_t>& splitDims) {
  std::vector<std::string> names;
  for (const auto& entry : splitDims) names.push_back(entry.first);
  return names;
}

void expectNotAllZero(const at::Tensor& grad, const std::string& what) {
  EXPECT_GT(grad.abs().sum().item<double>(), 0.0) << what << " is zero everywhere";
}

}  // namespace

at::Tensor gatherAlong(const at::Tensor& local, int64_t dim, Communicator& tp) {
  at::Tensor front = local.movedim(dim, 0).contiguous();  // [n, ...]
  std::vector<int64_t> shape = front.sizes().vec();
  shape[0] *= tp.size();
  at::Tensor gathered = at::empty(shape, front.options());  // [p * n, ...]
  tp.allGather(gathered, front);
  return gathered.movedim(0, dim).contiguous();
}

ParamMap gatherParameters(const torch::nn::Module& layer,
                          const std::map<std::string, int64_t>& splitDims, Communicator& tp,
                          bool grads) {
  ParamMap full;
  for (const auto& param : layer.named_parameters()) {
    at::Tensor local = grads ? param.value().grad() : param.value().detach();
    // A parameter backward never reached counts as a zero gradient, so the
    // comparison reports it and every rank still joins every all-gather.
    if (!local.defined()) local = at::zeros_like(param.value());
    int64_t dim = splitDims.at(param.key());
    full[param.key()] = dim == kNotSplit ? local.clone() : gatherAlong(local, dim, tp);
  }
  return full;
}

void expectNearReference(const at::Tensor& actual, const at::Tensor& expected,
                         const std::string& what) {
  ASSERT_TRUE(actual.defined()) << what << ": missing";
  ASSERT_EQ(actual.sizes(), expected.sizes()) << what;
  double worst = (actual - expected).abs().max().item<double>();
  double scale = expected.abs().max().item<double>();
  EXPECT_LE(worst, kReferenceAtol + kReferenceRtol * scale)
      << what << ": largest difference " << worst << ", largest entry " << scale;
}

void expectMatchesReference(const ReferenceCase& check, Communicator& tp) {
  SCOPED_TRACE(check.name + " on tp " + std::to_string(tp.size()));
  // A parameter missing from splitDims would go unchecked.
  ASSERT_EQ(namesOf(*check.layer), namesOf(check.splitDims));
  bool differentiable = check.input.is_floating_point();

  ParamMap weights = gatherParameters(*check.layer, check.splitDims, tp, /*grads=*/false);
  for (auto& entry : weights) entry.second.set_requires_grad(true);
  at::Tensor x = check.input.clone().set_requires_grad(differentiable);
  at::Tensor y = check.reference(x, weights);
  at::Tensor g = seededData(y.sizes(), 4242);
  (y * g).sum().backward();

  at::Tensor xPart = partOf(check.input, check.inputSharding, tp).set_requires_grad(differentiable);
  at::Tensor yPart = check.run(xPart);
  (yPart * partOf(g, check.outputSharding, tp)).sum().backward();

  expectNearReference(gatherSharded(yPart.detach(), check.outputSharding, tp), y.detach(),
                      "output");
  if (differentiable) {
    expectNotAllZero(x.grad(), "reference input gradient");
    expectNearReference(gatherSharded(xPart.grad(), check.inputSharding, tp), x.grad(),
                        "input grad");
  }
  ParamMap grads = gatherParameters(*check.layer, check.splitDims, tp, /*grads=*/true);
  for (const auto& entry : weights) {
    expectNotAllZero(entry.second.grad(), "reference gradient of " + entry.first);
    expectNearReference(grads.at(entry.first), entry.second.grad(), entry.first + " grad");
  }
}

}  // namespace strata::tensor_parallel::testing
