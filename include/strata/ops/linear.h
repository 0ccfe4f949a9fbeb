// y = x W^T + b and its backward, through the BLAS sgemm LibTorch links.
//
// linear() calls the BLAS's sgemm (MKL in PyPI's torch wheels, found at run
// time) for CPU float32 operands outside autocast, the bias entering as the
// product's starting value and each gradient one product into its own
// buffer, and LibTorch's at::linear for anything else or where LibTorch
// exports no sgemm (docs/step-speed.md compares them). STRATA_BLAS_GEMM=0 in the
// environment turns it off, to compare (1 or unset: on; any other value
// throws ConfigError naming it, on every rank alike).
//
// The backward computes only the gradients autograd asks for, so the
// zero-bubble schedules' split backward (strata/pipeline) takes its input
// and weight gradients in separate passes as it does through at::linear.
// Results equal at::linear's to rounding (a GEMM's summation order).
// Nothing blocks or communicates; shape errors throw c10::Error as
// at::linear's do.
#pragma once

#include <ATen/core/Tensor.h>

namespace strata::ops {

// x [..., in], weight [out, in], bias [out] or undefined -> [..., out].
at::Tensor linear(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias = {});

// Whether linear(x, weight, bias) takes the BLAS's sgemm.
bool linearUsesBlas(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias = {});

}  // namespace strata::ops
