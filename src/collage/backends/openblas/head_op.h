// HeadOp: the node a partition of this backend starts with (Gemm, MatMul or
// Conv), reduced to what the compiled kernel needs.
//
// The same analysis answers supports() and drives compile(), so the backend
// never claims a node it would then fail to compile. Each head op contributes
// at most one broadcast operand to the epilogue before any fused node does:
// Gemm's beta * C, or Conv's bias read as [M,1,1].
#pragma once

#include <string_view>
#include <variant>
#include <vector>

#include "collage/backends/openblas/batched_gemm.h"
#include "collage/backends/openblas/im2col_conv.h"

namespace collage::openblas {

struct HeadOp {
  std::variant<GemmGeometry, ConvGeometry> geometry;
  // A and B of a product, or a convolution's input and weights.
  ValueId lhs = kNoValue;
  ValueId rhs = kNoValue;
  // Gemm's C or the conv bias; kNoValue when absent.
  ValueId addend = kNoValue;
  float addend_scale = 1.0f;
  Shape addend_shape;
  Shape output;
};

// One row per op that can head a partition: its analysis (which answers
// supports() and drives compile()) and what it covers, for `collage backends`.
struct HeadOpRow {
  std::string_view op_type;
  std::string_view covers;
  Result<HeadOp> (*analyze)(const Graph& graph, const Node& node);
};
const std::vector<HeadOpRow>& head_op_table();

// Whether `op_type` can head a partition (the node may still be rejected).
bool is_head_op(const std::string& op_type);

// The head op computed by `node`, or why the backend cannot run it.
Result<HeadOp> analyze_head_op(const Graph& graph, const Node& node);

}  // namespace collage::openblas
