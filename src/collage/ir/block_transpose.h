// An 8 x 8 block of floats transposed in AVX registers: the inner step of
// every transpose that moves a tensor's innermost axis (the native
// Transpose, XNNPACK's NCHW/NHWC conversions). Element by element, one side
// of such a transpose is written or read with a stride and runs at a
// fraction of memory bandwidth.
#pragma once

#include <algorithm>
#include <cstdint>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

namespace collage {

#if defined(__AVX2__)

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

#endif

// Rows [r_begin, r_end) x columns [c_begin, c_end) of the row-major
// rows x cols matrix at `in`, written transposed into the cols x rows matrix
// at `out`: 8 x 8 blocks in registers (with AVX2), element by element at the
// edges. Callers tile a whole transpose into such ranges, a few cache lines
// wide on each side.
inline void transpose_tile(const float* in, float* out, std::int64_t rows, std::int64_t cols,
                           std::int64_t r_begin, std::int64_t r_end, std::int64_t c_begin,
                           std::int64_t c_end) {
  std::int64_t r_vector_end = r_begin;
  std::int64_t c_vector_end = c_begin;
#if defined(__AVX2__)
  r_vector_end = r_begin + (r_end - r_begin) / 8 * 8;
  c_vector_end = c_begin + (c_end - c_begin) / 8 * 8;
  for (std::int64_t r = r_begin; r < r_vector_end; r += 8) {
    for (std::int64_t c = c_begin; c < c_vector_end; c += 8) {
      transpose_8x8(in + r * cols + c, cols, out + c * rows + r, rows);
    }
  }
#endif
  // The edges the 8 x 8 blocks leave: the last columns of the vector rows,
  // then the last rows.
  for (std::int64_t r = r_begin; r < r_vector_end; ++r) {
    for (std::int64_t c = c_vector_end; c < c_end; ++c) out[c * rows + r] = in[r * cols + c];
  }
  for (std::int64_t r = r_vector_end; r < r_end; ++r) {
    for (std::int64_t c = c_begin; c < c_end; ++c) out[c * rows + r] = in[r * cols + c];
  }
}

// The same for bytes (8-bit quantized values), element by element, each
// byte XORed with `mask` on the way (0x80 turns uint8 into int8 shifted by
// 128 and back).
inline void transpose_tile(const std::uint8_t* in, std::uint8_t* out, std::int64_t rows,
                           std::int64_t cols, std::int64_t r_begin, std::int64_t r_end,
                           std::int64_t c_begin, std::int64_t c_end, std::uint8_t mask) {
  for (std::int64_t r = r_begin; r < r_end; ++r) {
    for (std::int64_t c = c_begin; c < c_end; ++c) out[c * rows + r] = in[r * cols + c] ^ mask;
  }
}

// `batches` dense row-major [rows, cols] matrices of T (float, or bytes)
// transposed to [cols, rows], cut into square tiles of kTile x kTile that
// keep both the reads and the writes within a few cache lines each. Each
// tile is one task, so a caller runs tile(0) .. tile(tasks() - 1) on
// whatever thread pool it has. Bytes are XORed with `mask` as they move.
template <typename T>
struct BatchedTransposeOf {
  static constexpr std::int64_t kTile = 32;

  BatchedTransposeOf(const T* src, T* dst, std::int64_t batches, std::int64_t rows,
                     std::int64_t cols, std::uint8_t mask = 0)
      : src(src),
        dst(dst),
        batches(batches),
        rows(rows),
        cols(cols),
        row_tiles((rows + kTile - 1) / kTile),
        col_tiles((cols + kTile - 1) / kTile),
        mask(mask) {}

  std::int64_t tasks() const { return batches * row_tiles * col_tiles; }

  void tile(std::int64_t task) const {
    const std::int64_t col_tile = task % col_tiles;
    const std::int64_t row_tile = (task / col_tiles) % row_tiles;
    const std::int64_t batch = task / (col_tiles * row_tiles);
    const std::int64_t r_begin = row_tile * kTile;
    const std::int64_t c_begin = col_tile * kTile;
    const T* in = src + batch * rows * cols;
    T* out = dst + batch * rows * cols;
    const std::int64_t r_end = std::min(rows, r_begin + kTile);
    const std::int64_t c_end = std::min(cols, c_begin + kTile);
    if constexpr (sizeof(T) == 1) {
      transpose_tile(in, out, rows, cols, r_begin, r_end, c_begin, c_end, mask);
    } else {
      transpose_tile(in, out, rows, cols, r_begin, r_end, c_begin, c_end);
    }
  }

  const T* src;
  T* dst;
  std::int64_t batches;
  std::int64_t rows;
  std::int64_t cols;
  std::int64_t row_tiles;
  std::int64_t col_tiles;
  std::uint8_t mask;
};

using BatchedTranspose = BatchedTransposeOf<float>;

}  // namespace collage
