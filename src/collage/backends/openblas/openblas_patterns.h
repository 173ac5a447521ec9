// The multi-op library calls of the openblas backend, as patterns.
//
// Each pattern is a head op (Conv, or Gemm/MatMul) followed by one or two
// Adds (bias, residual) and/or one activation: the chains compile_partition
// turns into a single BLAS call plus a one-pass epilogue. A bare head op is
// not a pattern; supports() offers it as a single-node candidate. Every node
// a pattern matches carries the predicate the compiler enforces, so a match
// is a partition the backend can compile (provided the matched chain's
// intermediate results are not needed elsewhere, which the partitioner's
// validity check decides).
#pragma once

#include <vector>

#include "collage/backends/backend.h"

namespace collage::openblas {

std::vector<NamedPattern> openblas_patterns();

}  // namespace collage::openblas
