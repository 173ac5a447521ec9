// MatMul: ONNX MatMul and Gemm as the oneDNN matmul primitive.
//
// MatMul follows numpy: 1-D operands are promoted to matrices, batch
// dimensions broadcast (oneDNN matmul handles batch broadcasting of either
// side). Gemm's transposes become strided views, so nothing is copied; alpha
// is folded into constant weights (or applied as a post-op) and beta * C
// becomes the matmul bias when it is a row vector, a binary-add post-op
// otherwise. Constant weights are reordered once into the layout oneDNN
// prefers.
#pragma once

#include <dnnl.hpp>
#include <vector>

#include "collage/backends/onednn/post_ops.h"
#include "collage/backends/onednn/program.h"
#include "collage/ir/graph.h"
#include "collage/ir/result.h"

namespace collage::onednn {

struct MatMulSpec {
  ValueId a = kNoValue;
  ValueId b = kNoValue;
  // Gemm's C, or kNoValue.
  ValueId c = kNoValue;
  ValueId output = kNoValue;
  // oneDNN dims (all of one rank >= 2) and the strides A and B are read with.
  memory::dims a_dims, a_strides;
  memory::dims b_dims, b_strides;
  memory::dims dst_dims;
  float alpha = 1.f;
  float beta = 1.f;
  // A constant that broadcasts as [1, ..., 1, N] to the result, added as the
  // primitive's bias (a folded Add), or kNoValue.
  ValueId bias = kNoValue;

  // Whether the ONNX output has exactly the dims of the oneDNN result (no
  // 1-D promotion), so that broadcasting against it is the same.
  bool output_is_dst = true;
};

// Decodes a MatMul or Gemm node, or says why oneDNN cannot run it.
Result<MatMulSpec> matmul_spec(const Graph& graph, const Node& node);

// Adds the matmul primitive with as many groups of `chain` fused as oneDNN
// runs well; returns how many. The last fused group's value (or
// spec.output, if none) holds the result; the caller runs the rest.
std::size_t emit_matmul(ProgramBuilder& builder, const MatMulSpec& spec, const PostOpChain& chain);

}  // namespace collage::onednn
