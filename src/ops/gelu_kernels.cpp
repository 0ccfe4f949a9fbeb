#include "gelu_kernels.h"

#include <immintrin.h>

#define STRATA_AVX512 __attribute__((target("avx512f")))

namespace strata::ops::detail {
namespace {

using Vec = __m512;

STRATA_AVX512 inline Vec splat(float v) { return _mm512_set1_ps(v); }
STRATA_AVX512 inline Vec mul(Vec a, Vec b) { return _mm512_mul_ps(a, b); }
STRATA_AVX512 inline Vec add(Vec a, Vec b) { return _mm512_add_ps(a, b); }
STRATA_AVX512 inline Vec sub(Vec a, Vec b) { return _mm512_sub_ps(a, b); }
STRATA_AVX512 inline Vec fma(Vec a, Vec b, Vec c) { return _mm512_fmadd_ps(a, b, c); }

// |v| and v's sign bit, as bit operations (AVX-512 F has no float and/or).
STRATA_AVX512 inline Vec absolute(Vec v) {
  return _mm512_castsi512_ps(
      _mm512_and_si512(_mm512_castps_si512(v), _mm512_set1_epi32(0x7fffffff)));
}
STRATA_AVX512 inline Vec withSignOf(Vec magnitude, Vec sign) {
  __m512i bit = _mm512_and_si512(_mm512_castps_si512(sign), _mm512_set1_epi32(INT32_MIN));
  return _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(magnitude), bit));
}

// e^v for v <= 0: v = k ln 2 + r with k an integer and |r| <= ln 2 / 2,
// e^r by its Taylor series to r^7 (relative error under 2e-8 there), times
// 2^k exactly (scalef). Below -87 the result is under float's normal range
// and taken as e^-87.
STRATA_AVX512 inline Vec expOfNonPositive(Vec v) {
  v = _mm512_max_ps(v, splat(-87.0f));
  Vec k = _mm512_roundscale_ps(mul(v, splat(1.44269504f)),
                               _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  // ln 2 in two parts, so that k ln 2 is subtracted without rounding error.
  Vec r = _mm512_fnmadd_ps(k, splat(0.693145752f), v);
  r = _mm512_fnmadd_ps(k, splat(1.42860677e-6f), r);
  Vec p = splat(1.0f / 5040);
  p = fma(p, r, splat(1.0f / 720));
  p = fma(p, r, splat(1.0f / 120));
  p = fma(p, r, splat(1.0f / 24));
  p = fma(p, r, splat(1.0f / 6));
  p = fma(p, r, splat(0.5f));
  p = fma(p, r, splat(1.0f));
  p = fma(p, r, splat(1.0f));
  return _mm512_scalef_ps(p, k);
}

// erf(z) given e^(-z^2): Abramowitz and Stegun 7.1.26 on |z|, sign restored.
STRATA_AVX512 inline Vec erfWith(Vec z, Vec expMinusZ2) {
  Vec a = absolute(z);
  Vec t = _mm512_div_ps(splat(1.0f), fma(splat(0.3275911f), a, splat(1.0f)));
  Vec poly = splat(1.061405429f);
  poly = fma(poly, t, splat(-1.453152027f));
  poly = fma(poly, t, splat(1.421413741f));
  poly = fma(poly, t, splat(-0.284496736f));
  poly = fma(poly, t, splat(0.254829592f));
  poly = mul(poly, t);
  return withSignOf(_mm512_fnmadd_ps(poly, expMinusZ2, splat(1.0f)), z);
}

constexpr float kSqrtHalf = 0.707106781f;       // 1 / sqrt 2
constexpr float kInvSqrtTwoPi = 0.398942280f;   // 1 / sqrt(2 pi)
constexpr float kSqrtTwoOverPi = 0.797884561f;  // sqrt(2 / pi)
constexpr float kCubic = 0.044715f;

// Exact GELU: Phi(x) and, for the backward, phi(x).
struct Normal {
  Vec cdf, pdf;
};
STRATA_AVX512 inline Normal normalAt(Vec x) {
  Vec halfSquare = mul(mul(x, x), splat(0.5f));  // x^2 / 2 = (x / sqrt 2)^2
  Vec e = expOfNonPositive(sub(splat(0.0f), halfSquare));
  Vec cdf = mul(splat(0.5f), add(splat(1.0f), erfWith(mul(x, splat(kSqrtHalf)), e)));
  return {cdf, mul(e, splat(kInvSqrtTwoPi))};
}

// tanh(u) = sign(u) (1 - e^(-2|u|)) / (1 + e^(-2|u|)).
STRATA_AVX512 inline Vec tanhOf(Vec u) {
  Vec e = expOfNonPositive(mul(splat(-2.0f), absolute(u)));
  Vec magnitude = _mm512_div_ps(sub(splat(1.0f), e), add(splat(1.0f), e));
  return withSignOf(magnitude, u);
}

STRATA_AVX512 inline Vec tanhArgument(Vec x) {  // u = sqrt(2/pi) (x + 0.044715 x^3)
  return mul(splat(kSqrtTwoOverPi), fma(mul(mul(x, x), x), splat(kCubic), x));
}

STRATA_AVX512 inline Vec forwardLanes(Vec x, bool tanh) {
  if (tanh) return mul(mul(splat(0.5f), x), add(splat(1.0f), tanhOf(tanhArgument(x))));
  return mul(x, normalAt(x).cdf);
}

STRATA_AVX512 inline Vec derivativeLanes(Vec x, bool tanh) {
  if (tanh) {
    // d/dx: (1 + th) / 2 + x (1 - th^2) / 2 * sqrt(2/pi) (1 + 3 * 0.044715 x^2)
    Vec th = tanhOf(tanhArgument(x));
    Vec du = mul(splat(kSqrtTwoOverPi), fma(mul(x, x), splat(3 * kCubic), splat(1.0f)));
    Vec slope = mul(mul(mul(splat(0.5f), x), _mm512_fnmadd_ps(th, th, splat(1.0f))), du);
    return fma(splat(0.5f), add(splat(1.0f), th), slope);
  }
  Normal n = normalAt(x);
  return fma(x, n.pdf, n.cdf);
}

// The last n % 16 elements through masked loads and stores.
STRATA_AVX512 inline __mmask16 tailMask(int64_t remaining) {
  return static_cast<__mmask16>((1u << remaining) - 1);
}

}  // namespace

bool avx512Available() { return __builtin_cpu_supports("avx512f"); }

STRATA_AVX512 void geluForward(const float* x, float* y, int64_t n, bool tanh) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, forwardLanes(_mm512_loadu_ps(x + i), tanh));
  if (i == n) return;
  __mmask16 mask = tailMask(n - i);
  _mm512_mask_storeu_ps(y + i, mask, forwardLanes(_mm512_maskz_loadu_ps(mask, x + i), tanh));
}

STRATA_AVX512 void geluBackward(const float* dy, const float* x, float* dx, int64_t n, bool tanh) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    Vec slope = derivativeLanes(_mm512_loadu_ps(x + i), tanh);
    _mm512_storeu_ps(dx + i, mul(_mm512_loadu_ps(dy + i), slope));
  }
  if (i == n) return;
  __mmask16 mask = tailMask(n - i);
  Vec slope = derivativeLanes(_mm512_maskz_loadu_ps(mask, x + i), tanh);
  _mm512_mask_storeu_ps(dx + i, mask, mul(_mm512_maskz_loadu_ps(mask, dy + i), slope));
}

}  // namespace strata::ops::detail
