// adamwUpdate's single pass against LibTorch's tensor operations written out
// here, and the tensors it leaves to those operations (another dtype, a
// strided view) giving the same result; splitting over threads changes no
// element.
#include "strata/optim/adamw_update.h"

#include <ATen/Parallel.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>

namespace strata::optim {
namespace {

const AdamWStep kHyper{0.01, 0.9, 0.95, 1e-8, 0.1, 3};

struct State {
  at::Tensor param, grad, expAvg, expAvgSq;
};

State randomState(int64_t n, at::ScalarType type = at::kFloat) {
  torch::manual_seed(5);
  auto options = torch::TensorOptions(type);
  return {torch::randn({n}, options), torch::randn({n}, options), torch::randn({n}, options) * 0.1,
          torch::rand({n}, options) * 0.01};
}

State cloned(const State& s) {
  return {s.param.clone(), s.grad.clone(), s.expAvg.clone(), s.expAvgSq.clone()};
}

// torch::optim::AdamW's step, written out.
void libtorchUpdate(State& s, const AdamWStep& h) {
  s.param.mul_(1 - h.lr * h.weightDecay);
  double biasCorrection1 = 1 - std::pow(h.beta1, h.step);
  double biasCorrection2 = 1 - std::pow(h.beta2, h.step);
  s.expAvg.mul_(h.beta1).add_(s.grad, 1 - h.beta1);
  s.expAvgSq.mul_(h.beta2).addcmul_(s.grad, s.grad, 1 - h.beta2);
  at::Tensor denominator = (s.expAvgSq.sqrt() / std::sqrt(biasCorrection2)).add_(h.eps);
  s.param.addcdiv_(s.expAvg, denominator, -h.lr / biasCorrection1);
}

void update(State& s, const AdamWStep& h) { adamwUpdate(s.param, s.grad, s.expAvg, s.expAvgSq, h); }

// Largest difference against the largest magnitude: m = b1 m + (1 - b1) g
// cancels to near zero in places, where one rounding more or less (LibTorch's
// vector kernels fuse a multiply-add, this loop need not) is a large
// fraction of the element.
double maxRelative(const at::Tensor& a, const at::Tensor& b) {
  return ((a - b).abs().max() / b.abs().max()).item<double>();
}

TEST(AdamWUpdate, SinglePassEqualsLibTorchsOperations) {
  State fused = randomState(100003);  // an odd length: the vector loop's tail
  State reference = cloned(fused);
  update(fused, kHyper);
  libtorchUpdate(reference, kHyper);
  EXPECT_LT(maxRelative(fused.param, reference.param), 1e-6);
  EXPECT_LT(maxRelative(fused.expAvg, reference.expAvg), 1e-6);
  EXPECT_LT(maxRelative(fused.expAvgSq, reference.expAvgSq), 1e-6);
  EXPECT_GT(fused.param._version(), 0);  // autograd sees the change
}

TEST(AdamWUpdate, DoubleAndStridedTensorsTakeTheTensorOperations) {
  State doubles = randomState(64, at::kDouble);
  State reference = cloned(doubles);
  update(doubles, kHyper);
  libtorchUpdate(reference, kHyper);
  EXPECT_TRUE(torch::equal(doubles.param, reference.param));

  State contiguous = randomState(64);
  State strided = cloned(contiguous);
  at::Tensor matrix = strided.param.view({8, 8}).t();  // a transposed view
  at::Tensor gradT = strided.grad.view({8, 8}).t();
  at::Tensor mT = strided.expAvg.view({8, 8}).t();
  at::Tensor vT = strided.expAvgSq.view({8, 8}).t();
  adamwUpdate(matrix, gradT, mT, vT, kHyper);
  update(contiguous, kHyper);
  EXPECT_LT(maxRelative(strided.param, contiguous.param), 1e-6);
}

// The gradient scale of either path equals multiplying the gradient first,
// element for element, and leaves the gradient as it was.
TEST(AdamWUpdate, GradientScaleEqualsScalingTheGradientFirst) {
  AdamWStep scaled = kHyper;
  scaled.gradScale = 0.37;
  for (at::ScalarType type : {at::kFloat, at::kDouble}) {
    State inUpdate = randomState(1001, type);
    State scaledFirst = cloned(inUpdate);
    at::Tensor grad = inUpdate.grad.clone();
    scaledFirst.grad.mul_(scaled.gradScale);
    update(inUpdate, scaled);
    update(scaledFirst, kHyper);
    EXPECT_TRUE(torch::equal(inUpdate.param, scaledFirst.param)) << type;
    EXPECT_TRUE(torch::equal(inUpdate.expAvgSq, scaledFirst.expAvgSq)) << type;
    EXPECT_TRUE(torch::equal(inUpdate.grad, grad)) << type;
  }
}

TEST(AdamWUpdate, ThreadsChangeNoElement) {
  State one = randomState(300000);
  State two = cloned(one);
  int threads = at::get_num_threads();
  at::set_num_threads(1);
  update(one, kHyper);
  at::set_num_threads(2);
  update(two, kHyper);
  at::set_num_threads(threads);
  EXPECT_TRUE(torch::equal(one.param, two.param));
  EXPECT_TRUE(torch::equal(one.expAvgSq, two.expAvgSq));
}

}  // namespace
}  // namespace strata::optim
