// Vectorized math for the native kernels: functions of eight floats (AVX2
// and FMA, which the build targets) where libm would compute one scalar at
// a time, and the same functions of sixteen floats for processors with
// AVX-512, compiled for it alone (COLLAGE_AVX512) and called only where
// has_avx512() says the processor runs it. The two widths take the same
// steps, so they give the same results.
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace collage::native {

// e^x by range reduction to [-ln2/2, ln2/2] and a degree-6 polynomial (about
// 2 ulp). Inputs below about -87.3 give 0 (libm would give a
// denormal); inputs above 88.38, where e^x is within a factor of two of
// FLT_MAX, give +inf.
inline __m256 exp8(__m256 x) {
  const __m256 log2e = _mm256_set1_ps(1.44269504088896341f);
  // ln 2 split in two so that n * ln2_hi is exact.
  const __m256 ln2_hi = _mm256_set1_ps(0.693359375f);
  const __m256 ln2_lo = _mm256_set1_ps(-2.12194440e-4f);
  x = _mm256_min_ps(x, _mm256_set1_ps(88.7228f));
  x = _mm256_max_ps(x, _mm256_set1_ps(-88.0f));
  const __m256 n =
      _mm256_round_ps(_mm256_mul_ps(x, log2e), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, ln2_hi, x);
  r = _mm256_fnmadd_ps(n, ln2_lo, r);
  // Taylor series of e^r to degree 6; |r| <= 0.35 keeps the error below 2e-7.
  __m256 p = _mm256_set1_ps(1.0f / 720.0f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 120.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 24.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 6.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.5f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  // 2^n from the exponent bits: n = -127 gives the bits of 0, n = 128 those of +inf.
  const __m256i bits =
      _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_mul_ps(p, _mm256_castsi256_ps(bits));
}

// 1 / (1 + e^-x): 0 below about -88, 1 above about 17.
inline __m256 sigmoid8(__m256 x) {
  const __m256 one = _mm256_set1_ps(1.0f);
  return _mm256_div_ps(one, _mm256_add_ps(one, exp8(_mm256_sub_ps(_mm256_setzero_ps(), x))));
}

// tanh x as (1 - e^-2|x|) / (1 + e^-2|x|) with x's sign; below |x| = 1/16,
// where 1 - e^-2|x| would cancel, its Taylor series to x^5 (relative error
// under 1e-9 there).
inline __m256 tanh8(__m256 x) {
  const __m256 sign_bit = _mm256_set1_ps(-0.0f);
  const __m256 one = _mm256_set1_ps(1.0f);
  const __m256 magnitude = _mm256_andnot_ps(sign_bit, x);
  const __m256 e = exp8(_mm256_mul_ps(magnitude, _mm256_set1_ps(-2.0f)));
  const __m256 large = _mm256_div_ps(_mm256_sub_ps(one, e), _mm256_add_ps(one, e));
  const __m256 x2 = _mm256_mul_ps(x, x);
  __m256 series = _mm256_fmadd_ps(x2, _mm256_set1_ps(2.0f / 15.0f), _mm256_set1_ps(-1.0f / 3.0f));
  series = _mm256_fmadd_ps(series, x2, one);
  const __m256 small = _mm256_mul_ps(series, magnitude);
  const __m256 is_small = _mm256_cmp_ps(magnitude, _mm256_set1_ps(0.0625f), _CMP_LT_OQ);
  return _mm256_or_ps(_mm256_blendv_ps(large, small, is_small), _mm256_and_ps(sign_bit, x));
}

// Functions compiled for AVX-512 although the build targets AVX2.
#define COLLAGE_AVX512 __attribute__((target("avx512f")))

// Whether this processor runs AVX-512F code, and COLLAGE_NATIVE_AVX512 is
// not 0 (which keeps the eight-lane forms, to compare the two).
bool has_avx512();

// exp8 in sixteen lanes, step for step. (The zero-masking forms of min,
// max, roundscale, the conversion and the shift, with every lane set, are
// the plain instructions; GCC 12 warns that the plain intrinsics' undefined
// pass-through operand may be used uninitialized.)
COLLAGE_AVX512 inline __m512 exp16(__m512 x) {
  constexpr __mmask16 kAll = 0xFFFF;
  x = _mm512_maskz_min_ps(kAll, x, _mm512_set1_ps(88.7228f));
  x = _mm512_maskz_max_ps(kAll, x, _mm512_set1_ps(-88.0f));
  const __m512 n =
      _mm512_maskz_roundscale_ps(kAll, _mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                 _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
  __m512 p = _mm512_set1_ps(1.0f / 720.0f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 120.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 24.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 6.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  const __m512i bits = _mm512_maskz_slli_epi32(
      kAll, _mm512_add_epi32(_mm512_maskz_cvtps_epi32(kAll, n), _mm512_set1_epi32(127)), 23);
  return _mm512_mul_ps(p, _mm512_castsi512_ps(bits));
}

COLLAGE_AVX512 inline __m512 sigmoid16(__m512 x) {
  const __m512 one = _mm512_set1_ps(1.0f);
  return _mm512_div_ps(one, _mm512_add_ps(one, exp16(_mm512_sub_ps(_mm512_setzero_ps(), x))));
}

COLLAGE_AVX512 inline __m512 tanh16(__m512 x) {
  const __m512 one = _mm512_set1_ps(1.0f);
  const __m512 magnitude = _mm512_abs_ps(x);
  const __m512 e = exp16(_mm512_mul_ps(magnitude, _mm512_set1_ps(-2.0f)));
  const __m512 large = _mm512_div_ps(_mm512_sub_ps(one, e), _mm512_add_ps(one, e));
  const __m512 x2 = _mm512_mul_ps(x, x);
  __m512 series = _mm512_fmadd_ps(x2, _mm512_set1_ps(2.0f / 15.0f), _mm512_set1_ps(-1.0f / 3.0f));
  series = _mm512_fmadd_ps(series, x2, one);
  const __m512 small = _mm512_mul_ps(series, magnitude);
  const __mmask16 is_small = _mm512_cmp_ps_mask(magnitude, _mm512_set1_ps(0.0625f), _CMP_LT_OQ);
  const __m512 unsigned_tanh = _mm512_mask_blend_ps(is_small, large, small);
  // x's sign bit onto |tanh x|.
  return _mm512_castsi512_ps(
      _mm512_or_si512(_mm512_castps_si512(unsigned_tanh),
                      _mm512_and_si512(_mm512_castps_si512(x), _mm512_set1_epi32(INT32_MIN))));
}

}  // namespace collage::native
