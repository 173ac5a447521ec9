#include "collage/backends/onednn/softmax.h"

#include <fmt/format.h>

#include <optional>
#include <string>

#include "collage/backends/onednn/layout.h"
#include "collage/backends/onednn/node_checks.h"
#include "collage/backends/onednn/quantize_linear.h"

namespace collage::onednn {

namespace {

// A QLinearSoftmax's types and scales into `spec`, or why oneDNN cannot run it.
std::optional<std::string> quantized_problem(const Graph& graph, const Node& node,
                                             SoftmaxSpec& spec) {
  if (node.inputs.size() < 4 || node.outputs.size() != 1 || node.input(0) == kNoValue) {
    return "QLinearSoftmax needs X, X_scale, Y_scale and one output";
  }
  const std::optional<memory::data_type> src = eight_bit_type(graph.type(node.input(0)).dtype);
  const std::optional<memory::data_type> dst = eight_bit_type(graph.type(node.outputs[0]).dtype);
  const std::optional<double> x_scale = scalar_input(graph, node, 1);
  const std::optional<double> x_zero = zero_point_input(graph, node, 2);
  const std::optional<double> y_scale = scalar_input(graph, node, 3);
  const std::optional<double> y_zero = zero_point_input(graph, node, 4);
  if (!src || !dst) return "QLinearSoftmax of other than 8-bit values";
  if (!x_scale || !x_zero || !y_scale || !y_zero) {
    return "QLinearSoftmax with scales or zero points computed at run time";
  }
  if (*y_zero != 0.0)
    return "QLinearSoftmax with an output zero point (oneDNN's softmax takes none)";
  spec.quantized = true;
  spec.src_type = *src;
  spec.dst_type = *dst;
  spec.x_scale = static_cast<float>(*x_scale);
  spec.x_zero_point = static_cast<std::int32_t>(*x_zero);
  spec.y_scale = static_cast<float>(*y_scale);
  return std::nullopt;
}

}  // namespace

Result<SoftmaxSpec> softmax_spec(const Graph& graph, const Node& node) {
  const bool quantized = node.domain == "com.microsoft" && node.op_type == "QLinearSoftmax";
  if (!quantized &&
      ((node.op_type != "Softmax" && node.op_type != "LogSoftmax") || !in_onnx_domain(node))) {
    return Failure{fmt::format("{} is not a softmax", node.op_type)};
  }
  SoftmaxSpec spec;
  if (quantized) {
    if (auto problem = quantized_problem(graph, node, spec)) return Failure{*problem};
  } else {
    if (auto problem = tensor_problem(graph, node, 1)) return Failure{*problem};
    if (node.input(0) == kNoValue || node.outputs.size() != 1) {
      return Failure{fmt::format("{} needs one input and one output", node.op_type)};
    }
  }
  spec.log = node.op_type == "LogSoftmax";
  spec.input = node.input(0);
  spec.output = node.outputs[0];
  const Shape& x = graph.type(spec.input).shape;
  const auto rank = static_cast<std::int64_t>(x.size());
  // A QLinearSoftmax's axis means what it meant in its Softmax's opset.
  const bool coerce_2d =
      (quantized ? node.attributes.get_int("opset", graph.opset) : graph.opset) < 13;
  std::int64_t axis = node.attributes.get_int("axis", coerce_2d ? 1 : -1);
  if (axis < 0) axis += rank;
  if (rank < 1 || axis < 0 || axis >= rank) {
    return Failure{fmt::format("{} axis out of range", node.op_type)};
  }
  if (graph.type(spec.output).shape != x)
    return Failure{fmt::format("{} changes the shape", node.op_type)};
  if (coerce_2d) {
    const std::int64_t inner = shape_numel(Shape(x.begin() + axis, x.end()));
    spec.dims = {shape_numel(x) / inner, inner};
    spec.axis = 1;
  } else {
    spec.dims = to_dims(x);
    spec.axis = static_cast<int>(axis);
  }
  return spec;
}

void emit_softmax(ProgramBuilder& builder, const SoftmaxSpec& spec) {
  const memory::desc layout = plain_desc(spec.dims);
  const memory::desc out_layout = plain_desc(spec.dims, spec.dst_type);
  memory src;
  dnnl::primitive_attr attr;
  if (spec.quantized) {
    src = dequantized(builder, spec.input, spec.x_scale, spec.x_zero_point,
                      plain_desc(spec.dims, spec.src_type));
    attr.set_output_scales(0, {1.0f / spec.y_scale});
  } else {
    src = builder.read(spec.input, layout);
  }
  dnnl::softmax_v2_forward::desc desc(
      dnnl::prop_kind::forward_inference,
      spec.log ? dnnl::algorithm::softmax_log : dnnl::algorithm::softmax_accurate, layout,
      out_layout, spec.axis);
  dnnl::softmax_v2_forward::primitive_desc pd(desc, attr, builder.engine());
  memory dst = builder.output_memory(spec.output, out_layout);
  builder.add(dnnl::softmax_v2_forward(pd), {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}});
  builder.define(spec.output, dst);
}

}  // namespace collage::onednn
