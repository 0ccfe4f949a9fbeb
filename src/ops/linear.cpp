#include "strata/ops/linear.h"

#include <ATen/autocast_mode.h>
#include <torch/autograd.h>

#include "blas_gemm.h"

namespace strata::ops {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::tensor_list;

// c [m, n] = op(a) op(b) + beta c, every operand a contiguous float matrix.
void gemm(bool transA, bool transB, const at::Tensor& a, const at::Tensor& b, const at::Tensor& c,
          float beta) {
  int64_t m = c.size(0), n = c.size(1), k = transA ? a.size(0) : a.size(1);
  detail::sgemm(transA, transB, m, n, k, 1.0f, a.data_ptr<float>(), a.size(1), b.data_ptr<float>(),
                b.size(1), beta, c.data_ptr<float>(), n);
}

// x viewed as rows of its last dimension: [tokens, in].
at::Tensor rowsOf(const at::Tensor& x) { return x.view({-1, x.size(-1)}); }

// x W^T + b: [..., in] -> [..., out], the bias (when kBias) entering as the
// product's starting value, as addmm does. LibTorch's custom functions take
// no undefined tensor, hence one instance with a bias and one without.
template <bool kBias>
struct BlasLinear : torch::autograd::Function<BlasLinear<kBias>> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, const at::Tensor& weight,
                            const at::Tensor& bias) {
    at::Tensor rows = rowsOf(x);                                            // [t, in]
    at::Tensor y = at::empty({rows.size(0), weight.size(0)}, x.options());  // [t, out]
    if (kBias) y.copy_(bias.expand_as(y));
    gemm(false, true, rows, weight, y, kBias ? 1.0f : 0.0f);  // x W^T (+ b)
    // x serves the weight's gradient only: a frozen weight (LoRA's base)
    // keeps nothing of it, as LibTorch's own linear.
    ctx->save_for_backward({weight.requires_grad() ? x : at::Tensor(), weight});
    std::vector<int64_t> sizes = x.sizes().vec();
    sizes.back() = weight.size(0);
    return y.view(sizes);
  }

  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, const at::Tensor& weight) {
    return forward(ctx, x, weight, at::Tensor());
  }

  static tensor_list backward(AutogradContext* ctx, tensor_list outputGrads) {
    tensor_list saved = ctx->get_saved_variables();
    const at::Tensor& x = saved[0];  // undefined for a frozen weight
    const at::Tensor& weight = saved[1];
    std::vector<int64_t> inputSizes = outputGrads[0].sizes().vec();
    inputSizes.back() = weight.size(1);
    at::Tensor grad = outputGrads[0].contiguous().view({-1, weight.size(0)});  // [t, out]
    tensor_list grads(kBias ? 3 : 2);
    if (ctx->needs_input_grad(0)) {
      at::Tensor gradX = at::empty({grad.size(0), weight.size(1)}, grad.options());
      gemm(false, false, grad, weight, gradX, 0.0f);  // [t, in] = g W
      grads[0] = gradX.view(inputSizes);
    }
    if (ctx->needs_input_grad(1)) {
      grads[1] = at::empty_like(weight);
      gemm(true, false, grad, rowsOf(x), grads[1], 0.0f);  // [out, in] = g^T x
    }
    if (kBias && ctx->needs_input_grad(2)) grads[2] = grad.sum(0);  // [out]
    return grads;
  }
};

bool isCpuFloat(const at::Tensor& t) {
  return t.device().is_cpu() && t.scalar_type() == at::kFloat;
}

}  // namespace

bool linearUsesBlas(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) {
  if (!detail::blasGemmEnabled() || at::autocast::is_autocast_enabled(at::kCPU)) return false;
  bool biasFits = !bias.defined() || (isCpuFloat(bias) && bias.dim() == 1);
  return isCpuFloat(x) && isCpuFloat(weight) && biasFits && x.dim() >= 2 && weight.dim() == 2 &&
         x.is_contiguous() && weight.is_contiguous() && x.numel() > 0 &&
         x.size(-1) == weight.size(1) && (!bias.defined() || bias.size(0) == weight.size(0));
}

at::Tensor linear(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) {
  if (!linearUsesBlas(x, weight, bias)) return at::linear(x, weight, bias);
  if (bias.defined()) return BlasLinear<true>::apply(x, weight, bias);
  return BlasLinear<false>::apply(x, weight);
}

}  // namespace strata::ops
