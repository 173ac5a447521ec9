// Sgemm: the native backend's single-precision matrix multiply.
//
// Convolution, Gemm and MatMul all reduce to C = alpha * op(A) * op(B) + beta
// * C (+ bias), so this one routine decides how fast the native backend is
// on most models. It follows the classic Goto/BLIS structure: op(A) is
// packed into panels of kSgemmMr rows and op(B) into panels of kSgemmNr
// columns, blocked along k so that a panel of B stays in L1 while panels of
// A stream from L2, and an AVX2/FMA register-blocked micro-kernel computes
// one kSgemmMr x kSgemmNr tile of C at a time (on processors with AVX-512,
// one of kSgemmMr x 2 kSgemmNr in sixteen-float vectors). Output tiles are spread over
// OpenMP threads. The right-hand operand can be any SgemmPanelSource, which
// lets convolution pack im2col panels straight from the image instead of
// materializing the column matrix. Bias adds and the beta scaling happen in
// the micro-kernel's store, so C is written once per k block.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>

namespace collage::native {

// A grow-only, 64-byte aligned buffer, one per thread and purpose, so that
// scratch space (packed panels, transformed tiles) is reused across calls
// instead of mapped and faulted in each time. Its contents start undefined.
class ScratchBuffer {
 public:
  float* get(std::int64_t count) {
    if (count > capacity_) {
      std::size_t bytes = static_cast<std::size_t>((count * 4 + 63) / 64 * 64);
      data_.reset(static_cast<float*>(std::aligned_alloc(64, bytes)));
      if (!data_) throw std::bad_alloc();
      capacity_ = count;
    }
    return data_.get();
  }

 private:
  struct Free {
    void operator()(float* p) const { std::free(p); }
  };
  std::unique_ptr<float, Free> data_;
  std::int64_t capacity_ = 0;
};

// Rows of op(A) and columns of op(B) that one micro-kernel call covers.
inline constexpr int kSgemmMr = 6;
inline constexpr int kSgemmNr = 16;

// A dense operand: element (r, c) of op(M) is data[r * ld + c], or
// data[c * ld + r] when `transposed`.
struct SgemmMatrix {
  const float* data = nullptr;
  std::int64_t ld = 0;
  bool transposed = false;
};

// The right-hand operand op(B), seen only through the panels sgemm asks for.
class SgemmPanelSource {
 public:
  virtual ~SgemmPanelSource() = default;
  // Writes rows [k0, k0 + kc) of columns [j0, j0 + nr) of op(B), nr <=
  // kSgemmNr, into `panel` row after row, kSgemmNr floats per row; the
  // columns past nr must be written as zeros. Called concurrently from
  // several threads for different panels.
  virtual void pack_panel(std::int64_t k0, std::int64_t kc, std::int64_t j0, std::int64_t nr,
                          float* panel) const = 0;
  // Packs columns [j0, j0 + n) as consecutive panels (each kc x kSgemmNr,
  // the last zero-padded). The default packs panel by panel; a source whose
  // rows are contiguous in memory overrides it to read each row once.
  virtual void pack_panels(std::int64_t k0, std::int64_t kc, std::int64_t j0, std::int64_t n,
                           float* panels) const;
};

// Where the result goes and what is added to it:
// C[i][j] = alpha * sum_p op(A)[i][p] op(B)[p][j] + beta * C[i][j]
//           + row_bias[i] + col_bias[j].
// With beta == 0, C is not read (it may hold garbage).
struct SgemmOutput {
  float* data = nullptr;
  std::int64_t ld = 0;
  float alpha = 1.0f;
  float beta = 0.0f;
  const float* row_bias = nullptr;  // m values, or null
  const float* col_bias = nullptr;  // n values, or null
};

// op(A) is m x k, op(B) is k x n, C is m x n. Uses at most `threads` threads.
void sgemm(std::int64_t m, std::int64_t n, std::int64_t k, const SgemmMatrix& a,
           const SgemmMatrix& b, const SgemmOutput& c, int threads);
void sgemm(std::int64_t m, std::int64_t n, std::int64_t k, const SgemmMatrix& a,
           const SgemmPanelSource& b, const SgemmOutput& c, int threads);

}  // namespace collage::native
