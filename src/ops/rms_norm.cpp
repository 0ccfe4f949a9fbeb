#include "strata/ops/rms_norm.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/autocast_mode.h>
#include <torch/autograd.h>

#include <cmath>

namespace strata::ops {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::tensor_list;

constexpr int kLanes = 16;  // independent partial sums, so a row's sum vectorises

// Rows a task takes: at hidden 4096, 64 KiB of each array.
int64_t rowGrain(int64_t hidden) { return std::max<int64_t>(1, 16384 / hidden); }

// sum_j a_j b_j over one row, in float32 like the written-out mean.
float rowDot(const float* a, const float* b, int64_t n) {
  float lanes[kLanes] = {};
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes)
    for (int l = 0; l < kLanes; ++l) lanes[l] += a[j + l] * b[j + l];
  float sum = 0;
  for (; j < n; ++j) sum += a[j] * b[j];
  for (float lane : lanes) sum += lane;
  return sum;
}

struct Rows {
  int64_t count;   // rows of x
  int64_t hidden;  // features a row
  explicit Rows(const at::Tensor& x) : count(x.numel() / x.size(-1)), hidden(x.size(-1)) {}
};

// y = (x r) w, rounded as the written-out form rounds it; r [rows] kept for
// the backward.
void normaliseRows(const float* x, const float* w, float* y, float* r, const Rows& rows,
                   double eps) {
  int64_t h = rows.hidden;
  at::parallel_for(0, rows.count, rowGrain(h), [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const float* xi = x + i * h;
      float* yi = y + i * h;
      float meanSquare = rowDot(xi, xi, h) / static_cast<float>(h);
      float inverse = 1.0f / std::sqrt(meanSquare + static_cast<float>(eps));
      r[i] = inverse;
      for (int64_t j = 0; j < h; ++j) yi[j] = (xi[j] * inverse) * w[j];
    }
  });
}

// dx = r (dy w) - x r^3 mean(dy w x); dw summed per intra-op thread into
// partials [threads, hidden], added together by the caller.
void differentiateRows(const float* dy, const float* x, const float* w, const float* r, float* dx,
                       float* partials, const Rows& rows) {
  int64_t h = rows.hidden;
  at::parallel_for(0, rows.count, rowGrain(h), [&](int64_t begin, int64_t end) {
    float* dw = partials + at::get_thread_num() * h;
    for (int64_t i = begin; i < end; ++i) {
      const float* dyi = dy + i * h;
      const float* xi = x + i * h;
      float* dxi = dx + i * h;
      float inverse = r[i];
      float weighted = 0;  // sum_j dy_j w_j x_j
      float lanes[kLanes] = {};
      int64_t j = 0;
      for (; j + kLanes <= h; j += kLanes)
        for (int l = 0; l < kLanes; ++l) lanes[l] += dyi[j + l] * w[j + l] * xi[j + l];
      for (; j < h; ++j) weighted += dyi[j] * w[j] * xi[j];
      for (float lane : lanes) weighted += lane;
      float correction = inverse * inverse * inverse * weighted / static_cast<float>(h);
      for (int64_t k = 0; k < h; ++k) {
        dxi[k] = inverse * (dyi[k] * w[k]) - xi[k] * correction;
        dw[k] += dyi[k] * (xi[k] * inverse);
      }
    }
  });
}

struct OwnRmsNorm : torch::autograd::Function<OwnRmsNorm> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, const at::Tensor& weight,
                            double eps) {
    Rows rows(x);
    at::Tensor y = at::empty_like(x);
    at::Tensor inverse = at::empty({rows.count}, x.options());  // r per row
    normaliseRows(x.data_ptr<float>(), weight.data_ptr<float>(), y.data_ptr<float>(),
                  inverse.data_ptr<float>(), rows, eps);
    ctx->save_for_backward({x, weight, inverse});
    return y;
  }

  static tensor_list backward(AutogradContext* ctx, tensor_list outputGrads) {
    tensor_list saved = ctx->get_saved_variables();
    const at::Tensor& x = saved[0];
    const at::Tensor& weight = saved[1];
    const at::Tensor& inverse = saved[2];
    at::Tensor grad = outputGrads[0].to(at::kFloat).contiguous();
    Rows rows(x);
    at::Tensor gradX = at::empty_like(x);
    at::Tensor partials = at::zeros({at::get_num_threads(), rows.hidden}, x.options());
    differentiateRows(grad.data_ptr<float>(), x.data_ptr<float>(), weight.data_ptr<float>(),
                      inverse.data_ptr<float>(), gradX.data_ptr<float>(),
                      partials.data_ptr<float>(), rows);
    return {gradX, partials.sum(0), at::Tensor()};
  }
};

// The statistics in float32, the normalised value in x's type, then the weight.
at::Tensor writtenOut(const at::Tensor& x, const at::Tensor& weight, double eps) {
  at::Tensor x32 = x.to(at::kFloat);
  at::Tensor inverseRms = at::rsqrt(x32.pow(2).mean(-1, /*keepdim=*/true) + eps);  // [..., 1]
  return (x32 * inverseRms).to(x.scalar_type()) * weight;
}

}  // namespace

bool rmsNormUsesOwnKernel(const at::Tensor& x, const at::Tensor& weight) {
  return !at::autocast::is_cpu_enabled() && x.dim() >= 1 && x.numel() > 0 && x.device().is_cpu() &&
         x.scalar_type() == at::kFloat && x.is_contiguous() && weight.device().is_cpu() &&
         weight.scalar_type() == at::kFloat && weight.dim() == 1 && weight.size(0) == x.size(-1) &&
         weight.is_contiguous();
}

at::Tensor rmsNorm(const at::Tensor& x, const at::Tensor& weight, double eps) {
  if (!rmsNormUsesOwnKernel(x, weight)) return writtenOut(x, weight, eps);
  return OwnRmsNorm::apply(x, weight, eps);
}

}  // namespace strata::ops
