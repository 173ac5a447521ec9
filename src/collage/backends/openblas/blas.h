// Blas: the few OpenBLAS entry points this backend calls.
//
// cblas.h is an include path private to this library (it comes from the
// OpenMP flavour of Debian's OpenBLAS, which other BLAS headers on the
// system could shadow), so the rest of the backend and its tests talk to
// OpenBLAS through these wrappers. Sizes are int64 here and checked to fit
// OpenBLAS's 32-bit blasint when a partition is compiled (fits_blas_int).
#pragma once

#include <cstdint>
#include <string>

namespace collage::openblas {

// openblas_get_config(): "OpenBLAS 0.3.21 DYNAMIC_ARCH NO_AFFINITY Haswell MAX_THREADS=64".
std::string library_version();

// The number of threads the next BLAS calls of the calling thread may use.
// The OpenMP build of OpenBLAS takes its thread count from the calling
// thread's OpenMP state, so every kernel run sets it again: another backend
// may have changed it in between.
void set_threads(int threads);

// Whether `n` fits OpenBLAS's index type.
bool fits_blas_int(std::int64_t n);

// Row-major C = alpha * op(A) * op(B) + beta * C, op(X) = X or X^T.
// C is m x n, op(A) is m x k, op(B) is k x n. Inside an OpenMP parallel
// region OpenBLAS runs single-threaded, which the batch-parallel paths use.
void sgemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
           const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c,
           std::int64_t ldc);

// Row-major y = alpha * op(A) * x + beta * y for an m x n matrix A: y has m
// elements (n when transposed). Products with a single row or column (a
// batch-1 classifier, a one-output-channel convolution) are matrix-vector
// products, which stream the matrix once instead of packing it as sgemm does.
void sgemv(bool trans, std::int64_t m, std::int64_t n, float alpha, const float* a,
           std::int64_t lda, const float* x, std::int64_t incx, float beta, float* y,
           std::int64_t incy);

// Row-major out (cols x rows) = in (rows x cols) transposed, for prepacking.
void transpose(std::int64_t rows, std::int64_t cols, const float* in, float* out);

}  // namespace collage::openblas
