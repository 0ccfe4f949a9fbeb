#include "strata/ops/swiglu.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/autocast_mode.h>
#include <torch/autograd.h>

#include "gelu_kernels.h"
#include "swiglu_kernels.h"

namespace strata::ops {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::tensor_list;

// Elements a task takes: 32768 floats (128 KiB) of each array, as gelu's.
constexpr int64_t kSwigluGrain = 32768;

// The backward in tensor operations, silu recomputed from gate (a GPU's
// tensors, bf16, autocast), so that every device keeps the same two tensors.
tensor_list tensorBackward(const at::Tensor& dh, const at::Tensor& gate, const at::Tensor& up) {
  at::Tensor s = at::sigmoid(gate);
  at::Tensor gradUp = dh * (gate * s);
  at::Tensor gradGate = dh * up * (s * (1 + gate * (1 - s)));
  return {gradGate.to(gate.scalar_type()), gradUp.to(up.scalar_type())};
}

struct Swiglu : torch::autograd::Function<Swiglu> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& gate, const at::Tensor& up) {
    ctx->save_for_backward({gate, up});
    if (!swigluUsesOwnKernel(gate, up)) return at::silu(gate) * up;
    at::Tensor h = at::empty_like(gate);
    const float* g = gate.data_ptr<float>();
    const float* u = up.data_ptr<float>();
    float* out = h.data_ptr<float>();
    at::parallel_for(0, gate.numel(), kSwigluGrain, [&](int64_t begin, int64_t end) {
      detail::swigluForward(g + begin, u + begin, out + begin, end - begin);
    });
    return h;
  }

  static tensor_list backward(AutogradContext* ctx, tensor_list outputGrads) {
    tensor_list saved = ctx->get_saved_variables();
    const at::Tensor& gate = saved[0];
    const at::Tensor& up = saved[1];
    if (!swigluUsesOwnKernel(gate, up)) return tensorBackward(outputGrads[0], gate, up);
    at::Tensor grad = outputGrads[0].to(at::kFloat).contiguous();
    at::Tensor gradGate = at::empty_like(gate);
    at::Tensor gradUp = at::empty_like(up);
    const float* dh = grad.data_ptr<float>();
    const float* g = gate.data_ptr<float>();
    const float* u = up.data_ptr<float>();
    float* dg = gradGate.data_ptr<float>();
    float* du = gradUp.data_ptr<float>();
    at::parallel_for(0, gate.numel(), kSwigluGrain, [&](int64_t begin, int64_t end) {
      detail::swigluBackward(dh + begin, g + begin, u + begin, dg + begin, du + begin, end - begin);
    });
    return {gradGate, gradUp};
  }
};

bool ownKernelTakes(const at::Tensor& t) {
  return t.device().is_cpu() && t.scalar_type() == at::kFloat && t.is_contiguous();
}

}  // namespace

bool swigluUsesOwnKernel(const at::Tensor& gate, const at::Tensor& up) {
  return detail::avx512Available() && !at::autocast::is_autocast_enabled(at::kCPU) &&
         gate.numel() > 0 && gate.sizes() == up.sizes() && ownKernelTakes(gate) &&
         ownKernelTakes(up);
}

at::Tensor swiglu(const at::Tensor& gate, const at::Tensor& up) { return Swiglu::apply(gate, up); }

}  // namespace strata::ops
