#include "strata/ops/gelu.h"

#include <ATen/Parallel.h>
#include <ATen/autocast_mode.h>
#include <torch/autograd.h>

#include "env_switch.h"
#include "gelu_kernels.h"

namespace strata::ops {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::tensor_list;

// Elements a task takes: 32768 floats (128 KiB) of each array, so that
// LibTorch's threads share an activation of a few MiB and a small one runs
// on its caller.
constexpr int64_t kGeluGrain = 32768;

const char* approximation(bool tanh) { return tanh ? "tanh" : "none"; }

struct OwnGelu : torch::autograd::Function<OwnGelu> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, bool tanh) {
    at::Tensor y = at::empty_like(x);
    const float* in = x.data_ptr<float>();
    float* out = y.data_ptr<float>();
    at::parallel_for(0, x.numel(), kGeluGrain, [&](int64_t begin, int64_t end) {
      detail::geluForward(in + begin, out + begin, end - begin, tanh);
    });
    ctx->save_for_backward({x});
    ctx->saved_data["tanh"] = tanh;
    return y;
  }

  static tensor_list backward(AutogradContext* ctx, tensor_list outputGrads) {
    at::Tensor x = ctx->get_saved_variables()[0];
    bool tanh = ctx->saved_data["tanh"].toBool();
    at::Tensor grad = outputGrads[0];
    if (!grad.is_contiguous() || grad.scalar_type() != at::kFloat)
      return {at::gelu_backward(grad, x, approximation(tanh)), at::Tensor()};
    at::Tensor gradX = at::empty_like(x);
    const float* dy = grad.data_ptr<float>();
    const float* in = x.data_ptr<float>();
    float* dx = gradX.data_ptr<float>();
    at::parallel_for(0, x.numel(), kGeluGrain, [&](int64_t begin, int64_t end) {
      detail::geluBackward(dy + begin, in + begin, dx + begin, end - begin, tanh);
    });
    return {gradX, at::Tensor()};
  }
};

}  // namespace

bool geluUsesOwnKernel(const at::Tensor& x) {
  return detail::switchedOn("STRATA_OWN_GELU") && detail::avx512Available() &&
         !at::autocast::is_autocast_enabled(at::kCPU) && x.device().is_cpu() &&
         x.scalar_type() == at::kFloat && x.is_contiguous() && x.numel() > 0;
}

at::Tensor gelu(const at::Tensor& x, bool tanh) {
  if (!geluUsesOwnKernel(x)) return at::gelu(x, approximation(tanh));
  return OwnGelu::apply(x, tanh);
}

}  // namespace strata::ops
