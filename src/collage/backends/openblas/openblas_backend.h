// The openblas backend: GEMM-shaped ops on OpenBLAS (the OpenMP build).
//
// A library-style backend: it runs Gemm, MatMul (batched, broadcast, 1-D)
// and Conv (by im2col + sgemm) on their own, and the patterns of
// openblas_patterns.h (a head op with a fused bias/residual/activation
// epilogue) as one call. Whether any of that beats the other backends is
// for the measurements to decide; the backend only promises to compute
// every case it claims exactly and to fail cleanly on the rest.
#pragma once

#include <memory>

#include "collage/backends/backend.h"

namespace collage {

std::unique_ptr<Backend> make_openblas_backend();

}  // namespace collage
