// What the CUDA tests share: the skip when this machine has no GPU, and
// comparisons with a tolerance each test states.
//
// These tests are compiled in every build and skipped (GTEST_SKIP) where
// LibTorch has no CUDA or sees no GPU, so CI on CPU lists them as skipped.
// `ctest -L cuda` selects them (scripts/gpu-check.sh).
#pragma once

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <string>

namespace strata::cuda_testing {

#define STRATA_REQUIRE_CUDA()                                                     \
  do {                                                                            \
    if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device available"; \
  } while (false)

// ||a - b||_inf <= tolerance * max(||b||_inf, 1e-6), both on the CPU.
inline ::testing::AssertionResult closeRelative(const at::Tensor& a, const at::Tensor& b,
                                                double tolerance) {
  at::Tensor x = a.detach().to(at::kCPU, at::kDouble);
  at::Tensor y = b.detach().to(at::kCPU, at::kDouble);
  if (x.sizes() != y.sizes()) return ::testing::AssertionFailure() << "shapes differ";
  double scale = std::max(y.abs().max().item<double>(), 1e-6);
  double error = (x - y).abs().max().item<double>();
  if (error <= tolerance * scale) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "max |a - b| = " << error << " > " << tolerance << " x " << scale;
}

}  // namespace strata::cuda_testing
