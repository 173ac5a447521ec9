// CoreCompute: the BLAS-backed part of a compiled partition, which writes
// the whole output of the partition's head node (a GEMM or a convolution).
//
// The kernel runs it and then the epilogue over the same buffer. Each
// implementation owns what it prepared at compile time (prepacked weights,
// its im2col workspace), so a run allocates nothing.
#pragma once

#include <span>

#include "collage/ir/tensor.h"

namespace collage::openblas {

class CoreCompute {
 public:
  virtual ~CoreCompute() = default;
  // Writes the head node's output into `out` (dense, row-major); `inputs`
  // are the partition's inputs.
  virtual void run(std::span<const Tensor> inputs, float* out) = 0;
};

}  // namespace collage::openblas
