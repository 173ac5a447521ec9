// Epilogue: the elementwise tail of a fused GEMM or convolution.
//
// OpenBLAS computes alpha * A * B and nothing after it. The library calls
// this backend offers (conv+bias+relu, Gemm's beta * C, matmul+add+gelu, a
// residual add) therefore end with one pass over the output that adds the
// broadcast operands and applies the activations, block by block while each
// block is in cache, instead of one pass per ONNX node. The steps run in the
// order the nodes did, so any chain of Adds and activations is exact.
#pragma once

#include <span>
#include <variant>
#include <vector>

#include "collage/backends/openblas/activation.h"
#include "collage/backends/openblas/operand.h"

namespace collage::openblas {

// `scale * operand`, broadcast (numpy style, towards the output only) and added.
struct Addend {
  Operand operand;
  float scale = 1.0f;
};

using EpilogueStep = std::variant<Addend, Activation>;

// Whether a tensor of shape `from` broadcasts to `to` without changing it.
bool broadcasts_to(const Shape& from, const Shape& to);

class Epilogue {
 public:
  Epilogue() = default;

  // Plans the pass for an output of shape `output`. Fails when an addend
  // does not broadcast to exactly that shape.
  static Result<Epilogue> plan(const Shape& output, std::vector<EpilogueStep> steps);

  bool empty() const { return steps_.empty(); }
  // Runs the steps over `out` in place, on up to `threads` OpenMP threads.
  void apply(std::span<const Tensor> inputs, float* out, int threads) const;

 private:
  // How one addend is read along a row of the output.
  struct PlannedAddend {
    Operand operand;
    float scale = 1.0f;
    // True: one value per row; false: a contiguous run of row_length_ values.
    bool per_row = false;
    // Element stride of the addend for each outer (row-indexing) dim.
    std::vector<std::int64_t> outer_strides;
  };
  using PlannedStep = std::variant<PlannedAddend, Activation>;

  // The output is processed as rows_ rows of row_length_ contiguous elements,
  // the longest trailing block along which every addend is either constant
  // or contiguous, so the inner loops are plain vector loops.
  std::vector<std::int64_t> outer_dims_;
  std::int64_t rows_ = 0;
  std::int64_t row_length_ = 0;
  std::vector<PlannedStep> steps_;
};

}  // namespace collage::openblas
