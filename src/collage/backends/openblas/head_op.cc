#include "collage/backends/openblas/head_op.h"

#include "collage/backends/openblas/epilogue.h"
#include "collage/ir/error.h"

namespace collage::openblas {
namespace {

Result<HeadOp> analyze_gemm_head(const Graph& graph, const Node& node) {
  Result<GemmGeometry> geometry = analyze_gemm(graph, node);
  if (!geometry) return Failure{geometry.error()};
  HeadOp head;
  head.lhs = node.input(0);
  head.rhs = node.input(1);
  head.output = geometry->output;
  if (ValueId c = node.input(2); c != kNoValue) {
    const TensorType& type = graph.type(c);
    if (type.dtype != DType::kFloat32 || !broadcasts_to(type.shape, head.output)) {
      return Failure{"Gemm C " + type.to_string() + " does not broadcast to " +
                     shape_to_string(head.output)};
    }
    try {
      head.addend_scale = node.attributes.get_float("beta", 1.0f);
    } catch (const Error& error) {
      return Failure{std::string("Gemm: ") + error.what()};
    }
    head.addend = c;
    head.addend_shape = type.shape;
  }
  head.geometry = std::move(*geometry);
  return head;
}

Result<HeadOp> analyze_matmul_head(const Graph& graph, const Node& node) {
  Result<GemmGeometry> geometry = analyze_matmul(graph, node);
  if (!geometry) return Failure{geometry.error()};
  HeadOp head;
  head.lhs = node.input(0);
  head.rhs = node.input(1);
  head.output = geometry->output;
  head.geometry = std::move(*geometry);
  return head;
}

Result<HeadOp> analyze_conv_head(const Graph& graph, const Node& node) {
  Result<ConvGeometry> geometry = analyze_conv(graph, node);
  if (!geometry) return Failure{geometry.error()};
  HeadOp head;
  head.lhs = node.input(0);
  head.rhs = node.input(1);
  head.output = geometry->output;
  if (ValueId bias = node.input(2); bias != kNoValue) {
    head.addend = bias;
    // [M] broadcast over the spatial dims of [N, M, spatial...].
    head.addend_shape = Shape(head.output.size() - 1, 1);
    head.addend_shape[0] = geometry->out_channels;
  }
  head.geometry = std::move(*geometry);
  return head;
}

}  // namespace

const std::vector<HeadOpRow>& head_op_table() {
  static const std::vector<HeadOpRow> table = {
      {"Gemm", "Gemm (transA, transB, alpha, beta, broadcast C)", analyze_gemm_head},
      {"MatMul", "MatMul (2-D, batched with broadcasting, 1-D operands)", analyze_matmul_head},
      {"Conv", "Conv (1-D/2-D, groups, strides, pads, dilations, auto_pad; im2col + sgemm)",
       analyze_conv_head},
  };
  return table;
}

namespace {

const HeadOpRow* find_head_op(std::string_view op_type) {
  for (const HeadOpRow& row : head_op_table()) {
    if (row.op_type == op_type) return &row;
  }
  return nullptr;
}

}  // namespace

bool is_head_op(const std::string& op_type) { return find_head_op(op_type) != nullptr; }

Result<HeadOp> analyze_head_op(const Graph& graph, const Node& node) {
  if (!node.domain.empty() && node.domain != "ai.onnx")
    return Failure{"op domain '" + node.domain + "' is not supported"};
  if (const HeadOpRow* row = find_head_op(node.op_type)) return row->analyze(graph, node);
  return Failure{"the openblas backend runs Gemm, MatMul and Conv, not " + node.op_type};
}

}  // namespace collage::openblas
