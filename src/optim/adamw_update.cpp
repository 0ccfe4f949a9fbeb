#include "strata/optim/adamw_update.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <cmath>

namespace strata::optim {
namespace {

// Elements a task updates: four float arrays of 128 KiB each, so a thread's
// share of a large parameter is a few tasks and a small one is one.
constexpr int64_t kUpdateGrain = 32768;

// The per-element constants, each rounded to float once, as LibTorch's
// kernels round the double scalars they are given.
struct Coefficients {
  float decay;  // 1 - lr wd
  float beta1, oneMinusBeta1;
  float beta2, oneMinusBeta2;
  float biasCorrection2Sqrt;  // sqrt(1 - b2^t)
  float eps;
  float negativeStepSize;  // -lr / (1 - b1^t)
  float gradScale;
};

Coefficients coefficientsOf(const AdamWStep& h) {
  double biasCorrection1 = 1 - std::pow(h.beta1, static_cast<double>(h.step));
  double biasCorrection2 = 1 - std::pow(h.beta2, static_cast<double>(h.step));
  return {static_cast<float>(1 - h.lr * h.weightDecay),
          static_cast<float>(h.beta1),
          static_cast<float>(1 - h.beta1),
          static_cast<float>(h.beta2),
          static_cast<float>(1 - h.beta2),
          static_cast<float>(std::sqrt(biasCorrection2)),
          static_cast<float>(h.eps),
          static_cast<float>(-h.lr / biasCorrection1),
          static_cast<float>(h.gradScale)};
}

// The loop the compiler vectorises (this file builds with -O3 and without
// errno from sqrt): every array read once, p, m and v written once.
void updateRange(float* __restrict p, const float* __restrict g, float* __restrict m,
                 float* __restrict v, int64_t n, const Coefficients& c) {
  for (int64_t i = 0; i < n; ++i) {
    float grad = g[i] * c.gradScale;
    float mean = m[i] * c.beta1 + grad * c.oneMinusBeta1;
    float square = v[i] * c.beta2 + c.oneMinusBeta2 * grad * grad;
    m[i] = mean;
    v[i] = square;
    float denominator = std::sqrt(square) / c.biasCorrection2Sqrt + c.eps;
    p[i] = p[i] * c.decay + c.negativeStepSize * mean / denominator;
  }
}

bool takesSinglePass(const at::Tensor& param, const at::Tensor& grad, const at::Tensor& expAvg,
                     const at::Tensor& expAvgSq) {
  for (const at::Tensor* t : {&param, &grad, &expAvg, &expAvgSq}) {
    if (!t->device().is_cpu() || t->scalar_type() != at::kFloat || !t->is_contiguous() ||
        t->numel() != param.numel())
      return false;
  }
  return true;
}

// LibTorch's eight operations, for tensors the single pass does not take.
void updateByTensorOperations(const at::Tensor& param, const at::Tensor& unscaledGrad,
                              const at::Tensor& expAvg, const at::Tensor& expAvgSq,
                              const AdamWStep& h) {
  at::Tensor grad = h.gradScale == 1 ? unscaledGrad : unscaledGrad * h.gradScale;
  if (h.weightDecay != 0) param.mul_(1 - h.lr * h.weightDecay);
  double biasCorrection1 = 1 - std::pow(h.beta1, static_cast<double>(h.step));
  double biasCorrection2 = 1 - std::pow(h.beta2, static_cast<double>(h.step));
  expAvg.mul_(h.beta1).add_(grad, 1 - h.beta1);
  expAvgSq.mul_(h.beta2).addcmul_(grad, grad, 1 - h.beta2);
  at::Tensor denominator = (expAvgSq.sqrt() / std::sqrt(biasCorrection2)).add_(h.eps);
  param.addcdiv_(expAvg, denominator, -h.lr / biasCorrection1);
}

}  // namespace

void adamwUpdate(const at::Tensor& param, const at::Tensor& grad, const at::Tensor& expAvg,
                 const at::Tensor& expAvgSq, const AdamWStep& hyper) {
  if (!takesSinglePass(param, grad, expAvg, expAvgSq))
    return updateByTensorOperations(param, grad, expAvg, expAvgSq, hyper);
  Coefficients c = coefficientsOf(hyper);
  float* p = param.data_ptr<float>();
  const float* g = grad.data_ptr<float>();
  float* m = expAvg.data_ptr<float>();
  float* v = expAvgSq.data_ptr<float>();
  at::parallel_for(0, param.numel(), kUpdateGrain, [&](int64_t begin, int64_t end) {
    updateRange(p + begin, g + begin, m + begin, v + begin, end - begin, c);
  });
  // Written through pointers: tell autograd's checks the tensors changed,
  // as an in-place tensor operation would.
  for (const at::Tensor* t : {&param, &expAvg, &expAvgSq}) t->unsafeGetTensorImpl()->bump_version();
}

}  // namespace strata::optim
