#include "strata/tensor_parallel/rotary.h"

#include <torch/torch.h>

#include <cmath>

#include "strata/error.h"

namespace strata::tensor_parallel {

namespace {

// The frequencies as rope_scaling.h's "llama3" rule scales them.
at::Tensor llama3Scaled(const at::Tensor& frequency, const RopeScaling& r) {
  double context = static_cast<double>(r.originalContext);
  at::Tensor wavelength = 2 * M_PI / frequency;
  at::Tensor slow = wavelength > context / r.lowFreqFactor;
  at::Tensor fast = wavelength < context / r.highFreqFactor;
  at::Tensor blend =
      (context / wavelength - r.lowFreqFactor) / (r.highFreqFactor - r.lowFreqFactor);
  at::Tensor between = (1 - blend) * frequency / r.factor + blend * frequency;
  return at::where(fast, frequency, at::where(slow, frequency / r.factor, between));
}

}  // namespace

at::Tensor rotaryInverseFrequencies(int64_t headDim, double theta, const RopeScaling& scaling) {
  if (headDim % 2 != 0)
    throw ConfigError("rotary embeddings need an even head dimension, got " +
                      std::to_string(headDim));
  checkRopeScaling(scaling);
  auto float64 = at::TensorOptions().dtype(at::kDouble);
  at::Tensor exponent = at::arange(0, headDim, 2, float64) / static_cast<double>(headDim);
  at::Tensor frequency = at::pow(theta, -exponent);  // [d/2]
  return scaling.enabled() ? llama3Scaled(frequency, scaling) : frequency;
}

RotaryTables rotaryTables(int64_t s, int64_t headDim, double theta, const RopeScaling& scaling,
                          const at::Tensor& like, int64_t firstPosition) {
  at::Tensor positions = at::arange(firstPosition, firstPosition + s, at::kLong);  // [s]
  return rotaryTablesAt(positions, headDim, theta, scaling, like);
}

RotaryTables rotaryTablesAt(const at::Tensor& positionIds, int64_t headDim, double theta,
                            const RopeScaling& scaling, const at::Tensor& like) {
  // In float64, then rounded once: positions of long contexts times the
  // fastest frequency need more than float32's 24 bits to stay exact.
  at::Tensor inverseFrequency = rotaryInverseFrequencies(headDim, theta, scaling);  // [d/2]
  at::Tensor positions = positionIds.to(at::kCPU, at::kDouble);                     // [(b,) s]
  at::Tensor angles = positions.unsqueeze(-1) * inverseFrequency;                   // [(b,) s, d/2]
  at::Tensor both = at::cat({angles, angles}, -1);                                  // [(b,) s, d]
  if (both.dim() == 3) both = both.unsqueeze(1);  // [b, 1, s, d]: over the heads
  auto out = like.options();
  return {both.cos().to(out), both.sin().to(out)};
}

at::Tensor applyRotary(const at::Tensor& x, const RotaryTables& tables) {
  int64_t half = x.size(-1) / 2;
  at::Tensor rotated = at::cat({-x.narrow(-1, half, half), x.narrow(-1, 0, half)}, -1);
  return x * tables.cos + rotated * tables.sin;  // tables broadcast over [b, heads]
}

}  // namespace strata::tensor_parallel
