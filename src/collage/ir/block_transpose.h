// An 8 x 8 block of floats transposed in AVX registers: the inner step of
// every transpose that moves a tensor's innermost axis (the native
// Transpose, XNNPACK's NCHW/NHWC conversions). Element by element, one side
// of such a transpose is written or read with a stride and runs at a
// fraction of memory bandwidth.
#pragma once

#include <cstdint>

#if defined(__AVX2__)
#include <immintrin.h>

namespace collage {

// Rows of 8 floats at `in` (`in_stride` floats apart) become the columns of
// the block at `out` (rows `out_stride` floats apart).
inline void transpose_8x8(const float* in, std::int64_t in_stride, float* out,
                          std::int64_t out_stride) {
  __m256 r[8];
  for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(in + i * in_stride);
  // Pairs of rows interleaved, then pairs of pairs, then the 128-bit halves.
  __m256 t[8];
  for (int i = 0; i < 4; ++i) {
    t[2 * i] = _mm256_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm256_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  __m256 q[8];
  for (int half = 0; half < 2; ++half) {
    const __m256 a = t[4 * half], b = t[4 * half + 1], c = t[4 * half + 2], d = t[4 * half + 3];
    q[4 * half + 0] = _mm256_shuffle_ps(a, c, _MM_SHUFFLE(1, 0, 1, 0));
    q[4 * half + 1] = _mm256_shuffle_ps(a, c, _MM_SHUFFLE(3, 2, 3, 2));
    q[4 * half + 2] = _mm256_shuffle_ps(b, d, _MM_SHUFFLE(1, 0, 1, 0));
    q[4 * half + 3] = _mm256_shuffle_ps(b, d, _MM_SHUFFLE(3, 2, 3, 2));
  }
  for (int i = 0; i < 4; ++i) {
    _mm256_storeu_ps(out + i * out_stride, _mm256_permute2f128_ps(q[i], q[4 + i], 0x20));
    _mm256_storeu_ps(out + (4 + i) * out_stride, _mm256_permute2f128_ps(q[i], q[4 + i], 0x31));
  }
}

}  // namespace collage

#endif
