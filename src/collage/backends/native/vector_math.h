// Vectorized math for the native kernels: functions of eight floats (AVX2
// and FMA, which the build targets) where libm would compute one scalar at
// a time.
#pragma once

#include <immintrin.h>

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

}  // namespace collage::native
