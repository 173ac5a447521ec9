#include "collage/backends/openblas/blas.h"

#include <cblas.h>

#include <climits>
#include <string_view>

namespace collage::openblas {

std::string library_version() {
  std::string_view config = openblas_get_config();
  while (!config.empty() && config.front() == ' ') config.remove_prefix(1);
  while (!config.empty() && config.back() == ' ') config.remove_suffix(1);
  return std::string(config);
}

void set_threads(int threads) { openblas_set_num_threads(threads < 1 ? 1 : threads); }

bool fits_blas_int(std::int64_t n) {
  return n >= 0 && n <= static_cast<std::int64_t>(sizeof(blasint) == 4 ? INT_MAX : LLONG_MAX);
}

void sgemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
           const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c,
           std::int64_t ldc) {
  cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
              trans_b ? CblasTrans : CblasNoTrans, static_cast<blasint>(m), static_cast<blasint>(n),
              static_cast<blasint>(k), alpha, a, static_cast<blasint>(lda), b,
              static_cast<blasint>(ldb), beta, c, static_cast<blasint>(ldc));
}

void sgemv(bool trans, std::int64_t m, std::int64_t n, float alpha, const float* a,
           std::int64_t lda, const float* x, std::int64_t incx, float beta, float* y,
           std::int64_t incy) {
  cblas_sgemv(CblasRowMajor, trans ? CblasTrans : CblasNoTrans, static_cast<blasint>(m),
              static_cast<blasint>(n), alpha, a, static_cast<blasint>(lda), x,
              static_cast<blasint>(incx), beta, y, static_cast<blasint>(incy));
}

void transpose(std::int64_t rows, std::int64_t cols, const float* in, float* out) {
  cblas_somatcopy(CblasRowMajor, CblasTrans, static_cast<blasint>(rows), static_cast<blasint>(cols),
                  1.0f, in, static_cast<blasint>(cols), out, static_cast<blasint>(rows));
}

}  // namespace collage::openblas
