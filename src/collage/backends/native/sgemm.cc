#include "collage/backends/native/sgemm.h"

#include <immintrin.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <new>

#include "collage/backends/native/vector_math.h"

namespace collage::native {
namespace {

constexpr std::int64_t kMr = kSgemmMr;
constexpr std::int64_t kNr = kSgemmNr;
// Depth of a k block: one packed B panel (kKc x kNr floats, 16 KiB) stays in
// L1 while the micro-kernel walks down a block of A.
constexpr std::int64_t kKc = 256;
// Rows of A one tile covers: kMc x kKc floats (96 KiB) stay in L2.
constexpr std::int64_t kMc = 96;
// Columns one tile covers when there is enough work for every thread.
constexpr std::int64_t kNt = 512;
// Columns of B packed at once (kKc x kNc floats, 4 MiB, shared through L3).
constexpr std::int64_t kNc = 4096;
// Panels of B one packing task covers: a row-major B is then read in runs
// of kPanelGroup * kNr floats per row.
constexpr std::int64_t kPanelGroup = 8;
// Rows of A packed at once, which bounds the packed-A buffer for tall
// operands (batched MatMul folded into one GEMM).
constexpr std::int64_t kMChunk = 4096;
// Up to this many columns of B, A is read where it lies instead of packed:
// each of its elements then serves at most two B panels, and packing it
// (one more read and a write of all of A) cost as much as the products
// (an LSTM's input product, W [1024 x 512] by 32 steps).
constexpr std::int64_t kDirectAMaxColumns = 32;
// Below this many multiply-adds a GEMV is not worth waking up threads.
constexpr std::int64_t kParallelGemvWork = 1 << 15;
// Below this many multiply-adds (a few microseconds on one core) a GEMM is
// not worth waking up threads either.
constexpr std::int64_t kParallelGemmWork = 1 << 17;

std::int64_t round_up(std::int64_t value, std::int64_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}
std::int64_t ceil_div(std::int64_t value, std::int64_t divisor) {
  return (value + divisor - 1) / divisor;
}

thread_local ScratchBuffer packed_a_buffer;
thread_local ScratchBuffer packed_b_buffer;
thread_local ScratchBuffer gemv_buffer;

class DenseSource final : public SgemmPanelSource {
 public:
  explicit DenseSource(const SgemmMatrix& b) : b_(b) {}

  void pack_panels(std::int64_t k0, std::int64_t kc, std::int64_t j0, std::int64_t n,
                   float* panels) const override {
    if (b_.transposed) {
      SgemmPanelSource::pack_panels(k0, kc, j0, n, panels);
      return;
    }
    // Row by row, so that memory is read sequentially; each row scatters
    // into every panel of the group.
    const std::int64_t full = n / kNr;
    const std::int64_t rest = n % kNr;
    for (std::int64_t p = 0; p < kc; ++p) {
      const float* src = b_.data + (k0 + p) * b_.ld + j0;
      float* dst = panels + p * kNr;
      for (std::int64_t panel = 0; panel < full; ++panel, src += kNr, dst += kc * kNr) {
        _mm256_store_ps(dst, _mm256_loadu_ps(src));
        _mm256_store_ps(dst + 8, _mm256_loadu_ps(src + 8));
      }
      if (rest == 0) continue;
      std::int64_t j = 0;
      for (; j < rest; ++j) dst[j] = src[j];
      for (; j < kNr; ++j) dst[j] = 0.0f;
    }
  }

  void pack_panel(std::int64_t k0, std::int64_t kc, std::int64_t j0, std::int64_t nr,
                  float* panel) const override {
    if (b_.transposed) {
      // op(B)[p][j] = data[j * ld + p]: each column of the panel is a row in memory.
      for (std::int64_t j = 0; j < nr; ++j) {
        const float* src = b_.data + (j0 + j) * b_.ld + k0;
        for (std::int64_t p = 0; p < kc; ++p) panel[p * kNr + j] = src[p];
      }
      for (std::int64_t j = nr; j < kNr; ++j) {
        for (std::int64_t p = 0; p < kc; ++p) panel[p * kNr + j] = 0.0f;
      }
      return;
    }
    const float* src = b_.data + k0 * b_.ld + j0;
    if (nr == kNr) {
      for (std::int64_t p = 0; p < kc; ++p, src += b_.ld, panel += kNr) {
        _mm256_store_ps(panel, _mm256_loadu_ps(src));
        _mm256_store_ps(panel + 8, _mm256_loadu_ps(src + 8));
      }
      return;
    }
    for (std::int64_t p = 0; p < kc; ++p, src += b_.ld, panel += kNr) {
      std::int64_t j = 0;
      for (; j < nr; ++j) panel[j] = src[j];
      for (; j < kNr; ++j) panel[j] = 0.0f;
    }
  }

 private:
  SgemmMatrix b_;
};

// Packs rows [i0, i0 + mr) x columns [k0, k0 + kc) of op(A) into a panel of
// kc groups of kMr floats; rows past mr are zero.
void pack_a_panel(const SgemmMatrix& a, std::int64_t i0, std::int64_t mr, std::int64_t k0,
                  std::int64_t kc, float* panel) {
  if (a.transposed) {
    // op(A)[i][p] = data[p * ld + i]: each k step reads kMr neighbours.
    for (std::int64_t p = 0; p < kc; ++p) {
      const float* src = a.data + (k0 + p) * a.ld + i0;
      std::int64_t r = 0;
      for (; r < mr; ++r) panel[p * kMr + r] = src[r];
      for (; r < kMr; ++r) panel[p * kMr + r] = 0.0f;
    }
    return;
  }
  const float* rows[kMr];
  for (std::int64_t r = 0; r < kMr; ++r) rows[r] = a.data + (i0 + std::min(r, mr - 1)) * a.ld + k0;
  if (mr == kMr) {
    for (std::int64_t p = 0; p < kc; ++p) {
#pragma GCC unroll 6
      for (std::int64_t r = 0; r < kMr; ++r) panel[p * kMr + r] = rows[r][p];
    }
    return;
  }
  for (std::int64_t p = 0; p < kc; ++p) {
    for (std::int64_t r = 0; r < kMr; ++r) panel[p * kMr + r] = r < mr ? rows[r][p] : 0.0f;
  }
}

// How one micro-kernel tile is written back.
struct TileStore {
  float alpha;
  // Factor of the C already in memory; 0 means C is not read.
  float beta;
  // At the tile's first row / column, or null.
  const float* row_bias;
  const float* col_bias;
};

// C tile (mr x nr, at `c`) <- store(A panel * packed B panel). The A panel
// is packed (kDirect false: kc groups of kMr floats at `pa`) or read where
// it lies (kDirect true: row r at pa + r * lda, rows past mr reading row
// mr - 1, whose results are not stored).
// The twelve accumulators are named variables, not an array: GCC keeps an
// array of vectors in memory across the loop, which halves the speed.
template <bool kDirect>
void micro_kernel(std::int64_t kc, const float* pa, std::int64_t lda, const float* pb, float* c,
                  std::int64_t ldc, std::int64_t mr, std::int64_t nr, const TileStore& store) {
  __m256 c00 = _mm256_setzero_ps(), c01 = _mm256_setzero_ps();
  __m256 c10 = _mm256_setzero_ps(), c11 = _mm256_setzero_ps();
  __m256 c20 = _mm256_setzero_ps(), c21 = _mm256_setzero_ps();
  __m256 c30 = _mm256_setzero_ps(), c31 = _mm256_setzero_ps();
  __m256 c40 = _mm256_setzero_ps(), c41 = _mm256_setzero_ps();
  __m256 c50 = _mm256_setzero_ps(), c51 = _mm256_setzero_ps();
  // Bring the C tile in while the products are computed: its rows are far
  // apart in memory and would otherwise miss at the store.
  for (std::int64_t r = 0; r < mr; ++r) {
    _mm_prefetch(reinterpret_cast<const char*>(c + r * ldc), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(c + r * ldc + kNr - 1), _MM_HINT_T0);
  }
  // Where row r's element p is: packed, pa[p * kMr + r]; direct, row_r[p].
  const float* row_0 = pa;
  const float* row_1 = pa;
  const float* row_2 = pa;
  const float* row_3 = pa;
  const float* row_4 = pa;
  const float* row_5 = pa;
  if constexpr (kDirect) {
    const auto row = [&](std::int64_t r) { return pa + std::min(r, mr - 1) * lda; };
    row_1 = row(1);
    row_2 = row(2);
    row_3 = row(3);
    row_4 = row(4);
    row_5 = row(5);
  }
  for (std::int64_t p = 0; p < kc; ++p) {
    const __m256 b0 = _mm256_load_ps(pb);
    const __m256 b1 = _mm256_load_ps(pb + 8);
    __m256 a;
    if constexpr (kDirect) {
      a = _mm256_broadcast_ss(row_0 + p);
    } else {
      // The A panel streams from L2; fetch a few steps ahead.
      _mm_prefetch(reinterpret_cast<const char*>(pa + 8 * kMr), _MM_HINT_T0);
      a = _mm256_broadcast_ss(pa + 0);
    }
    c00 = _mm256_fmadd_ps(a, b0, c00);
    c01 = _mm256_fmadd_ps(a, b1, c01);
    a = _mm256_broadcast_ss(kDirect ? row_1 + p : pa + 1);
    c10 = _mm256_fmadd_ps(a, b0, c10);
    c11 = _mm256_fmadd_ps(a, b1, c11);
    a = _mm256_broadcast_ss(kDirect ? row_2 + p : pa + 2);
    c20 = _mm256_fmadd_ps(a, b0, c20);
    c21 = _mm256_fmadd_ps(a, b1, c21);
    a = _mm256_broadcast_ss(kDirect ? row_3 + p : pa + 3);
    c30 = _mm256_fmadd_ps(a, b0, c30);
    c31 = _mm256_fmadd_ps(a, b1, c31);
    a = _mm256_broadcast_ss(kDirect ? row_4 + p : pa + 4);
    c40 = _mm256_fmadd_ps(a, b0, c40);
    c41 = _mm256_fmadd_ps(a, b1, c41);
    a = _mm256_broadcast_ss(kDirect ? row_5 + p : pa + 5);
    c50 = _mm256_fmadd_ps(a, b0, c50);
    c51 = _mm256_fmadd_ps(a, b1, c51);
    if constexpr (!kDirect) pa += kMr;
    pb += kNr;
  }
  const __m256 acc[kMr][2] = {{c00, c01}, {c10, c11}, {c20, c21},
                              {c30, c31}, {c40, c41}, {c50, c51}};

  if (nr == kNr) {
    // Full-width rows (all of them, or the first mr at the bottom edge).
    const __m256 alpha = _mm256_set1_ps(store.alpha);
    const __m256 beta = _mm256_set1_ps(store.beta);
#pragma GCC unroll 6
    for (int r = 0; r < kMr; ++r) {
      if (r >= mr) break;
      float* row = c + r * ldc;
      __m256 v0 = acc[r][0];
      __m256 v1 = acc[r][1];
      if (store.alpha != 1.0f) {
        v0 = _mm256_mul_ps(v0, alpha);
        v1 = _mm256_mul_ps(v1, alpha);
      }
      if (store.beta == 1.0f) {
        v0 = _mm256_add_ps(v0, _mm256_loadu_ps(row));
        v1 = _mm256_add_ps(v1, _mm256_loadu_ps(row + 8));
      } else if (store.beta != 0.0f) {
        v0 = _mm256_fmadd_ps(beta, _mm256_loadu_ps(row), v0);
        v1 = _mm256_fmadd_ps(beta, _mm256_loadu_ps(row + 8), v1);
      }
      if (store.row_bias != nullptr) {
        const __m256 bias = _mm256_broadcast_ss(store.row_bias + r);
        v0 = _mm256_add_ps(v0, bias);
        v1 = _mm256_add_ps(v1, bias);
      }
      if (store.col_bias != nullptr) {
        v0 = _mm256_add_ps(v0, _mm256_loadu_ps(store.col_bias));
        v1 = _mm256_add_ps(v1, _mm256_loadu_ps(store.col_bias + 8));
      }
      _mm256_storeu_ps(row, v0);
      _mm256_storeu_ps(row + 8, v1);
    }
    return;
  }

  alignas(32) float tile[kMr][kNr];
  for (int r = 0; r < kMr; ++r) {
    _mm256_store_ps(tile[r], acc[r][0]);
    _mm256_store_ps(tile[r] + 8, acc[r][1]);
  }
  for (std::int64_t r = 0; r < mr; ++r) {
    float* row = c + r * ldc;
    for (std::int64_t j = 0; j < nr; ++j) {
      float v = store.alpha * tile[r][j];
      if (store.beta != 0.0f) v += store.beta * row[j];
      if (store.row_bias != nullptr) v += store.row_bias[r];
      if (store.col_bias != nullptr) v += store.col_bias[j];
      row[j] = v;
    }
  }
}

// Writes the first nr floats of rows [0, mr) of a tile whose rows are two
// sixteen-float vectors in `acc` (row r's v-th at acc[2 * r + v]), as
// micro_kernel's store does.
COLLAGE_AVX512 void store_tile16(const __m512* acc, float* c, std::int64_t ldc, std::int64_t mr,
                                 std::int64_t nr, const TileStore& store) {
  constexpr int kVectors = 2;
  const __m512 alpha = _mm512_set1_ps(store.alpha);
  const __m512 beta = _mm512_set1_ps(store.beta);
  for (int v = 0; v < kVectors; ++v) {
    const std::int64_t width = std::clamp<std::int64_t>(nr - v * 16, 0, 16);
    if (width == 0) break;
    const __mmask16 mask = static_cast<__mmask16>((1u << width) - 1);
    const __m512 col_bias = store.col_bias != nullptr
                                ? _mm512_maskz_loadu_ps(mask, store.col_bias + v * 16)
                                : _mm512_setzero_ps();
    for (std::int64_t r = 0; r < mr; ++r) {
      float* at = c + r * ldc + v * 16;
      __m512 x = acc[r * kVectors + v];
      if (store.alpha != 1.0f) x = _mm512_mul_ps(x, alpha);
      if (store.beta != 0.0f) x = _mm512_fmadd_ps(beta, _mm512_maskz_loadu_ps(mask, at), x);
      if (store.row_bias != nullptr) x = _mm512_add_ps(x, _mm512_set1_ps(store.row_bias[r]));
      if (store.col_bias != nullptr) x = _mm512_add_ps(x, col_bias);
      _mm512_mask_storeu_ps(at, mask, x);
    }
  }
}

// micro_kernel for processors with AVX-512 (has_avx512): kMr rows of A
// against kPanels adjacent B panels (the second kNr * kc floats after the
// first), a sixteen-float vector per row of each. Two panels make twelve
// accumulators, which keep both FMA units busy through their latency with
// two vector loads and six broadcasts per step: twice the floats per step
// of the eight-lane kernel. One panel (the last of an odd count) leaves
// them partly idle. A is packed or direct as in micro_kernel.
template <bool kDirect, int kPanels>
COLLAGE_AVX512 void micro_kernel16(std::int64_t kc, const float* pa, std::int64_t lda,
                                   const float* pb, float* c, std::int64_t ldc, std::int64_t mr,
                                   std::int64_t nr, const TileStore& store) {
  static_assert(kPanels == 1 || kPanels == 2);
  for (std::int64_t r = 0; r < mr; ++r) {
    _mm_prefetch(reinterpret_cast<const char*>(c + r * ldc), _MM_HINT_T0);
    if (kPanels == 2) _mm_prefetch(reinterpret_cast<const char*>(c + r * ldc + 16), _MM_HINT_T0);
  }
  // Named accumulators (see micro_kernel): cR0 and cR1 are row R's two
  // vectors; the second ones stay zero for one panel.
  __m512 c00 = _mm512_setzero_ps(), c01 = _mm512_setzero_ps();
  __m512 c10 = _mm512_setzero_ps(), c11 = _mm512_setzero_ps();
  __m512 c20 = _mm512_setzero_ps(), c21 = _mm512_setzero_ps();
  __m512 c30 = _mm512_setzero_ps(), c31 = _mm512_setzero_ps();
  __m512 c40 = _mm512_setzero_ps(), c41 = _mm512_setzero_ps();
  __m512 c50 = _mm512_setzero_ps(), c51 = _mm512_setzero_ps();
  // Where row r's element p is: packed, pa[p * kMr + r]; direct, row_r[p].
  const auto row = [&](std::int64_t r) {
    return kDirect ? pa + std::min(r, mr - 1) * lda : pa + r;
  };
  const float* r0 = row(0);
  const float* r1 = row(1);
  const float* r2 = row(2);
  const float* r3 = row(3);
  const float* r4 = row(4);
  const float* r5 = row(5);
  constexpr std::int64_t kStep = kDirect ? 1 : kMr;
  const float* pb1 = pb + kNr * kc;
  for (std::int64_t p = 0, at = 0; p < kc; ++p, at += kStep) {
    if constexpr (!kDirect) {
      // The A panel streams from L2; fetch a few steps ahead.
      _mm_prefetch(reinterpret_cast<const char*>(r0 + at + 8 * kMr), _MM_HINT_T0);
    }
    const __m512 b0 = _mm512_load_ps(pb + p * kNr);
    const __m512 b1 = kPanels == 2 ? _mm512_load_ps(pb1 + p * kNr) : b0;
    __m512 a = _mm512_set1_ps(r0[at]);
    c00 = _mm512_fmadd_ps(a, b0, c00);
    if (kPanels == 2) c01 = _mm512_fmadd_ps(a, b1, c01);
    a = _mm512_set1_ps(r1[at]);
    c10 = _mm512_fmadd_ps(a, b0, c10);
    if (kPanels == 2) c11 = _mm512_fmadd_ps(a, b1, c11);
    a = _mm512_set1_ps(r2[at]);
    c20 = _mm512_fmadd_ps(a, b0, c20);
    if (kPanels == 2) c21 = _mm512_fmadd_ps(a, b1, c21);
    a = _mm512_set1_ps(r3[at]);
    c30 = _mm512_fmadd_ps(a, b0, c30);
    if (kPanels == 2) c31 = _mm512_fmadd_ps(a, b1, c31);
    a = _mm512_set1_ps(r4[at]);
    c40 = _mm512_fmadd_ps(a, b0, c40);
    if (kPanels == 2) c41 = _mm512_fmadd_ps(a, b1, c41);
    a = _mm512_set1_ps(r5[at]);
    c50 = _mm512_fmadd_ps(a, b0, c50);
    if (kPanels == 2) c51 = _mm512_fmadd_ps(a, b1, c51);
  }
  const __m512 acc[kMr * 2] = {c00, c01, c10, c11, c20, c21, c30, c31, c40, c41, c50, c51};
  store_tile16(acc, c, ldc, mr, nr, store);
}

// k == 0: the product is empty, only the scaling and the biases remain.
void scale_and_bias(std::int64_t m, std::int64_t n, const SgemmOutput& c) {
  for (std::int64_t i = 0; i < m; ++i) {
    float* row = c.data + i * c.ld;
    for (std::int64_t j = 0; j < n; ++j) {
      float v = c.beta != 0.0f ? c.beta * row[j] : 0.0f;
      if (c.row_bias != nullptr) v += c.row_bias[i];
      if (c.col_bias != nullptr) v += c.col_bias[j];
      row[j] = v;
    }
  }
}

void sgemm_packed(std::int64_t m, std::int64_t n, std::int64_t k, const SgemmMatrix& a,
                  const SgemmPanelSource& b, const SgemmOutput& c, int threads) {
  const bool direct_a = !a.transposed && n <= kDirectAMaxColumns;
  const bool wide = has_avx512();
  const std::int64_t m_chunk = std::min(m, kMChunk);
  const std::int64_t n_block = std::min(n, kNc);
  const std::int64_t k_block = std::min(k, kKc);
  float* packed_a = packed_a_buffer.get(round_up(m_chunk, kMr) * k_block);
  float* packed_b = packed_b_buffer.get(round_up(n_block, kNr) * k_block);

  // Tile sizes: large tiles reuse packed panels best, but every thread
  // needs a few tiles, so shrink them when the matrix is small.
  std::int64_t mc = std::min(kMc, round_up(m_chunk, kMr));
  std::int64_t nt = std::min(kNt, round_up(n_block, kNr));
  if (threads > 1) {
    auto tiles = [&] { return ceil_div(m_chunk, mc) * ceil_div(n_block, nt); };
    const std::int64_t wanted = 3 * static_cast<std::int64_t>(threads);
    while (tiles() < wanted && nt > 4 * kNr) nt = round_up(nt / 2, kNr);
    while (tiles() < wanted && mc > 2 * kMr) mc = round_up(mc / 2, kMr);
    while (tiles() < wanted && nt > kNr) nt = round_up(nt / 2, kNr);
  }

#pragma omp parallel num_threads(threads) if (threads > 1)
  for (std::int64_t ic = 0; ic < m; ic += m_chunk) {
    const std::int64_t m_cur = std::min(m_chunk, m - ic);
    const std::int64_t a_panels = ceil_div(m_cur, kMr);
    for (std::int64_t pc = 0; pc < k; pc += kKc) {
      const std::int64_t kc = std::min(kKc, k - pc);
      const bool first_block = pc == 0;
      if (!direct_a) {
#pragma omp for schedule(static)
        for (std::int64_t ip = 0; ip < a_panels; ++ip) {
          pack_a_panel(a, ic + ip * kMr, std::min(kMr, m_cur - ip * kMr), pc, kc,
                       packed_a + ip * kMr * kc);
        }
      }
      for (std::int64_t jc = 0; jc < n; jc += kNc) {
        const std::int64_t n_cur = std::min(kNc, n - jc);
        const std::int64_t group_width = kPanelGroup * kNr;
        const std::int64_t groups = ceil_div(n_cur, group_width);
#pragma omp for schedule(static)
        for (std::int64_t group = 0; group < groups; ++group) {
          const std::int64_t j = group * group_width;
          b.pack_panels(pc, kc, jc + j, std::min(group_width, n_cur - j), packed_b + j * kc);
        }
        const std::int64_t m_tiles = ceil_div(m_cur, mc);
        const std::int64_t n_tiles = ceil_div(n_cur, nt);
#pragma omp for collapse(2) schedule(dynamic, 1)
        for (std::int64_t mt = 0; mt < m_tiles; ++mt) {
          for (std::int64_t ntile = 0; ntile < n_tiles; ++ntile) {
            const std::int64_t i_end = std::min(m_cur, (mt + 1) * mc);
            const std::int64_t j_end = std::min(n_cur, (ntile + 1) * nt);
            // Down the columns of the tile: one B panel stays in L1 while
            // the A panels of the tile stream past it.
            for (std::int64_t jr = ntile * nt; jr < j_end;) {
              // Two B panels at a time with sixteen lanes, else one.
              const bool two_panels = wide && j_end - jr > kNr;
              const float* pb = packed_b + (jr / kNr) * kNr * kc;
              const std::int64_t col = jc + jr;
              const std::int64_t nr = std::min(two_panels ? 2 * kNr : kNr, j_end - jr);
              for (std::int64_t ir = mt * mc; ir < i_end; ir += kMr) {
                const std::int64_t row = ic + ir;
                TileStore store{c.alpha, first_block ? c.beta : 1.0f, nullptr, nullptr};
                if (first_block && c.row_bias != nullptr) store.row_bias = c.row_bias + row;
                if (first_block && c.col_bias != nullptr) store.col_bias = c.col_bias + col;
                float* tile = c.data + row * c.ld + col;
                const std::int64_t mr = std::min(kMr, i_end - ir);
                const float* pa =
                    direct_a ? a.data + row * a.ld + pc : packed_a + (ir / kMr) * kMr * kc;
                const std::int64_t lda = direct_a ? a.ld : 0;
                if (two_panels) {
                  (direct_a ? micro_kernel16<true, 2>
                            : micro_kernel16<false, 2>)(kc, pa, lda, pb, tile, c.ld, mr, nr, store);
                } else if (wide) {
                  (direct_a ? micro_kernel16<true, 1>
                            : micro_kernel16<false, 1>)(kc, pa, lda, pb, tile, c.ld, mr, nr, store);
                } else {
                  (direct_a ? micro_kernel<true> : micro_kernel<false>)(kc, pa, lda, pb, tile, c.ld,
                                                                        mr, nr, store);
                }
              }
              jr += two_panels ? 2 * kNr : kNr;
            }
          }
        }
      }
    }
  }
}

float dot(const float* x, const float* y, std::int64_t count) {
  __m256 acc0 = _mm256_setzero_ps();
  __m256 acc1 = _mm256_setzero_ps();
  __m256 acc2 = _mm256_setzero_ps();
  __m256 acc3 = _mm256_setzero_ps();
  std::int64_t i = 0;
  for (; i + 32 <= count; i += 32) {
    acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i), acc0);
    acc1 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i + 8), _mm256_loadu_ps(y + i + 8), acc1);
    acc2 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i + 16), _mm256_loadu_ps(y + i + 16), acc2);
    acc3 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i + 24), _mm256_loadu_ps(y + i + 24), acc3);
  }
  for (; i + 8 <= count; i += 8) {
    acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i), acc0);
  }
  const __m256 sum8 = _mm256_add_ps(_mm256_add_ps(acc0, acc1), _mm256_add_ps(acc2, acc3));
  __m128 sum4 = _mm_add_ps(_mm256_castps256_ps128(sum8), _mm256_extractf128_ps(sum8, 1));
  sum4 = _mm_hadd_ps(sum4, sum4);
  sum4 = _mm_hadd_ps(sum4, sum4);
  float sum = _mm_cvtss_f32(sum4);
  for (; i < count; ++i) sum += x[i] * y[i];
  return sum;
}

// The result of a matrix-vector product: y[i * stride] for i < count, with
// SgemmOutput's scaling and the bias along the vector (`bias`) plus a single
// bias value from the other dimension (`bias_scalar`).
struct VectorOutput {
  float* data;
  std::int64_t stride;
  float alpha;
  float beta;
  const float* bias;
  float bias_scalar;

  void store(std::int64_t i, float product) const {
    float v = alpha * product + bias_scalar;
    float& y = data[i * stride];
    if (beta != 0.0f) v += beta * y;
    if (bias != nullptr) v += bias[i];
    y = v;
  }
};

// y[i] = dot(row i of `matrix`, x) for i < rows.
void gemv_rows(std::int64_t rows, std::int64_t k, const float* matrix, std::int64_t ld,
               const float* x, const VectorOutput& y, int threads) {
  const bool parallel = threads > 1 && rows * k >= kParallelGemvWork;
#pragma omp parallel for num_threads(threads) if (parallel) schedule(static)
  for (std::int64_t i = 0; i < rows; ++i) y.store(i, dot(matrix + i * ld, x, k));
}

// y[j] = sum_p x[p] * matrix[p * ld + j] for j < cols: each matrix row is
// read once, accumulating a block of columns in registers.
void gemv_columns(std::int64_t cols, std::int64_t k, const float* matrix, std::int64_t ld,
                  const float* x, const VectorOutput& y, int threads) {
  constexpr std::int64_t kBlock = 64;
  const std::int64_t blocks = ceil_div(cols, kBlock);
  const bool parallel = threads > 1 && cols * k >= kParallelGemvWork;
#pragma omp parallel for num_threads(threads) if (parallel) schedule(static)
  for (std::int64_t block = 0; block < blocks; ++block) {
    const std::int64_t j0 = block * kBlock;
    const std::int64_t width = std::min(kBlock, cols - j0);
    if (width == kBlock) {
      __m256 acc[8];
      for (auto& v : acc) v = _mm256_setzero_ps();
      for (std::int64_t p = 0; p < k; ++p) {
        const float* row = matrix + p * ld + j0;
        const __m256 xp = _mm256_broadcast_ss(x + p);
#pragma GCC unroll 8
        for (int v = 0; v < 8; ++v) {
          acc[v] = _mm256_fmadd_ps(xp, _mm256_loadu_ps(row + 8 * v), acc[v]);
        }
      }
      alignas(32) float sums[kBlock];
      for (int v = 0; v < 8; ++v) _mm256_store_ps(sums + 8 * v, acc[v]);
      for (std::int64_t j = 0; j < kBlock; ++j) y.store(j0 + j, sums[j]);
      continue;
    }
    float sums[kBlock] = {};
    for (std::int64_t p = 0; p < k; ++p) {
      const float* row = matrix + p * ld + j0;
      for (std::int64_t j = 0; j < width; ++j) sums[j] += x[p] * row[j];
    }
    for (std::int64_t j = 0; j < width; ++j) y.store(j0 + j, sums[j]);
  }
}

// Copies a strided vector into contiguous scratch (or returns it in place).
const float* contiguous(const float* data, std::int64_t stride, std::int64_t count) {
  if (stride == 1) return data;
  float* copy = gemv_buffer.get(count);
  for (std::int64_t i = 0; i < count; ++i) copy[i] = data[i * stride];
  return copy;
}

}  // namespace

void SgemmPanelSource::pack_panels(std::int64_t k0, std::int64_t kc, std::int64_t j0,
                                   std::int64_t n, float* panels) const {
  for (std::int64_t j = 0; j < n; j += kNr) {
    pack_panel(k0, kc, j0 + j, std::min(kNr, n - j), panels + j * kc);
  }
}

void sgemm(std::int64_t m, std::int64_t n, std::int64_t k, const SgemmMatrix& a,
           const SgemmPanelSource& b, const SgemmOutput& c, int threads) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    scale_and_bias(m, n, c);
    return;
  }
  sgemm_packed(m, n, k, a, b, c, m * n * k < kParallelGemmWork ? 1 : std::max(threads, 1));
}

void sgemm(std::int64_t m, std::int64_t n, std::int64_t k, const SgemmMatrix& a,
           const SgemmMatrix& b, const SgemmOutput& c, int threads) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    scale_and_bias(m, n, c);
    return;
  }
  threads = std::max(threads, 1);
  // Matrix-vector products are memory bound: packing would only add traffic.
  if (n == 1) {
    const float* x = b.transposed ? b.data : contiguous(b.data, b.ld, k);
    VectorOutput y{c.data, c.ld,       c.alpha,
                   c.beta, c.row_bias, c.col_bias != nullptr ? c.col_bias[0] : 0.0f};
    if (a.transposed) {
      gemv_columns(m, k, a.data, a.ld, x, y, threads);
    } else {
      gemv_rows(m, k, a.data, a.ld, x, y, threads);
    }
    return;
  }
  if (m == 1) {
    const float* x = a.transposed ? contiguous(a.data, a.ld, k) : a.data;
    VectorOutput y{c.data, 1,          c.alpha,
                   c.beta, c.col_bias, c.row_bias != nullptr ? c.row_bias[0] : 0.0f};
    if (b.transposed) {
      gemv_rows(n, k, b.data, b.ld, x, y, threads);
    } else {
      gemv_columns(n, k, b.data, b.ld, x, y, threads);
    }
    return;
  }
  sgemm_packed(m, n, k, a, DenseSource(b), c, m * n * k < kParallelGemmWork ? 1 : threads);
}

}  // namespace collage::native
