#include "strata/optim/sum_of_squares.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <functional>

namespace strata::optim {
namespace {

constexpr int64_t kGrain = 65536;  // elements a task sums
constexpr int kLanes = 8;          // independent sums, so the loop vectorises

double sumRange(const float* x, int64_t n) {
  double lanes[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int j = 0; j < kLanes; ++j) {
      double value = x[i + j];
      lanes[j] += value * value;
    }
  }
  double total = 0;
  for (; i < n; ++i) total += static_cast<double>(x[i]) * x[i];
  for (double lane : lanes) total += lane;
  return total;
}

bool takesSinglePass(const at::Tensor& values) {
  return values.device().is_cpu() && values.scalar_type() == at::kFloat && values.is_contiguous();
}

}  // namespace

double sumOfSquaresOnHost(const at::Tensor& cpuValues) {
  if (!takesSinglePass(cpuValues)) return cpuValues.to(at::kDouble).pow(2).sum().item<double>();
  const float* x = cpuValues.data_ptr<float>();
  return at::parallel_reduce(
      0, cpuValues.numel(), kGrain, 0.0,
      [&](int64_t begin, int64_t end, double sum) {
        return sum + sumRange(x + begin, end - begin);
      },
      std::plus<double>());
}

at::Tensor sumOfSquares(const at::Tensor& values) {
  if (!takesSinglePass(values)) return values.to(at::kDouble).pow(2).sum();
  return at::scalar_tensor(sumOfSquaresOnHost(values), at::kDouble);
}

}  // namespace strata::optim
