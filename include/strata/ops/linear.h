// y = x W^T + b and its backward, through oneDNN's GEMM where LibTorch
// brings one.
//
// Debian's LibTorch multiplies CPU float32 matrices with OpenBLAS. oneDNN
// (libdnnl), which that LibTorch links for its own kernels, has a GEMM that
// on this machine's AVX-512 cores takes 8% less time over a transformer
// block's forward, input-gradient and weight-gradient products (one thread,
// docs/step-speed.md). linear() calls it for CPU float32 operands outside
// autocast, found at run time (dnnl_sgemm), and LibTorch's at::linear for
// anything else or where no oneDNN is loaded. STRATA_ONEDNN_GEMM=0 in the
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

// Whether linear(x, weight, bias) takes oneDNN's GEMM.
bool linearUsesOneDnn(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias = {});

}  // namespace strata::ops
