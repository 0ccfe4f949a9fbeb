#include "gelu_kernels.h"

#include "avx512_lanes.h"

namespace strata::ops::detail {
namespace {

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
