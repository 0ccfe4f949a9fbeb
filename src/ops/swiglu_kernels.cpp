#include "swiglu_kernels.h"

#include "avx512_lanes.h"

namespace strata::ops::detail {
namespace {

// sigmoid(g) from e = e^-|g| <= 1, which cannot overflow:
// 1 / (1 + e) for g >= 0, e / (1 + e) below.
STRATA_AVX512 inline Vec sigmoidOf(Vec g) {
  Vec e = expOfNonPositive(sub(splat(0.0f), absolute(g)));
  Vec positive = _mm512_div_ps(splat(1.0f), add(splat(1.0f), e));
  __mmask16 negative = _mm512_cmp_ps_mask(g, splat(0.0f), _CMP_LT_OQ);
  return _mm512_mask_mul_ps(positive, negative, positive, e);
}

STRATA_AVX512 inline Vec forwardLanes(Vec g, Vec u) { return mul(mul(g, sigmoidOf(g)), u); }

// silu'(g) = s (1 + g (1 - s)), s = sigmoid(g).
struct Gradients {
  Vec dg, du;
};
STRATA_AVX512 inline Gradients backwardLanes(Vec dh, Vec g, Vec u) {
  Vec s = sigmoidOf(g);
  Vec slope = mul(s, fma(g, sub(splat(1.0f), s), splat(1.0f)));
  return {mul(mul(dh, u), slope), mul(dh, mul(g, s))};
}

}  // namespace

STRATA_AVX512 void swigluForward(const float* g, const float* u, float* h, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm512_storeu_ps(h + i, forwardLanes(_mm512_loadu_ps(g + i), _mm512_loadu_ps(u + i)));
  if (i == n) return;
  __mmask16 mask = tailMask(n - i);
  _mm512_mask_storeu_ps(
      h + i, mask,
      forwardLanes(_mm512_maskz_loadu_ps(mask, g + i), _mm512_maskz_loadu_ps(mask, u + i)));
}

STRATA_AVX512 void swigluBackward(const float* dh, const float* g, const float* u, float* dg,
                                  float* du, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    Gradients r =
        backwardLanes(_mm512_loadu_ps(dh + i), _mm512_loadu_ps(g + i), _mm512_loadu_ps(u + i));
    _mm512_storeu_ps(dg + i, r.dg);
    _mm512_storeu_ps(du + i, r.du);
  }
  if (i == n) return;
  __mmask16 mask = tailMask(n - i);
  Gradients r =
      backwardLanes(_mm512_maskz_loadu_ps(mask, dh + i), _mm512_maskz_loadu_ps(mask, g + i),
                    _mm512_maskz_loadu_ps(mask, u + i));
  _mm512_mask_storeu_ps(dg + i, mask, r.dg);
  _mm512_mask_storeu_ps(du + i, mask, r.du);
}

}  // namespace strata::ops::detail
