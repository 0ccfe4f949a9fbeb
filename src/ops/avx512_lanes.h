// Sixteen float lanes of AVX-512 F, and e^v on them: the pieces the
// activation kernels (gelu_kernels.cpp, swiglu_kernels.cpp) build from.
// Each function is built for AVX-512 whatever the compiler's target; their
// callers check the CPU first (avx512Available, gelu_kernels.h).
#pragma once

#include <immintrin.h>

#include <cstdint>

#define STRATA_AVX512 __attribute__((target("avx512f")))

namespace strata::ops::detail {

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

// The last n % 16 elements through masked loads and stores.
STRATA_AVX512 inline __mmask16 tailMask(int64_t remaining) {
  return static_cast<__mmask16>((1u << remaining) - 1);
}

}  // namespace strata::ops::detail
