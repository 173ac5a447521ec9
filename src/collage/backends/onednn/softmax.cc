#include "collage/backends/onednn/softmax.h"

#include <fmt/format.h>

#include "collage/backends/onednn/node_checks.h"

namespace collage::onednn {

Result<SoftmaxSpec> softmax_spec(const Graph& graph, const Node& node) {
  if ((node.op_type != "Softmax" && node.op_type != "LogSoftmax") || !in_onnx_domain(node)) {
    return Failure{fmt::format("{} is not a softmax", node.op_type)};
  }
  if (auto problem = tensor_problem(graph, node, 1)) return Failure{*problem};
  if (node.input(0) == kNoValue || node.outputs.size() != 1) {
    return Failure{fmt::format("{} needs one input and one output", node.op_type)};
  }
  SoftmaxSpec spec;
  spec.log = node.op_type == "LogSoftmax";
  spec.input = node.input(0);
  spec.output = node.outputs[0];
  const Shape& x = graph.type(spec.input).shape;
  const auto rank = static_cast<std::int64_t>(x.size());
  const bool coerce_2d = graph.opset < 13;
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
  dnnl::softmax_v2_forward::desc desc(
      dnnl::prop_kind::forward_inference,
      spec.log ? dnnl::algorithm::softmax_log : dnnl::algorithm::softmax_accurate, layout, layout,
      spec.axis);
  dnnl::softmax_v2_forward::primitive_desc pd(desc, builder.engine());
  memory dst = builder.output_memory(spec.output, layout);
  builder.add(dnnl::softmax_v2_forward(pd),
              {{DNNL_ARG_SRC, builder.read(spec.input, layout)}, {DNNL_ARG_DST, dst}});
  builder.define(spec.output, dst);
}

}  // namespace collage::onednn
