#include "collage/backends/onednn/quantize_linear.h"

#include <fmt/format.h>

#include <optional>
#include <unordered_map>
#include <utility>

#include "collage/backends/backend.h"
#include "collage/backends/onednn/layout.h"
#include "collage/backends/onednn/node_checks.h"

namespace collage::onednn {

Result<QuantizeLinearSpec> quantize_linear_spec(const Graph& graph, const Node& node) {
  const bool quantize = node.op_type == "QuantizeLinear";
  if (!in_onnx_domain(node) || (!quantize && node.op_type != "DequantizeLinear")) {
    return Failure{fmt::format("{} is not a QuantizeLinear or DequantizeLinear", node.op_type)};
  }
  if (node.inputs.size() < 2 || node.input(0) == kNoValue || node.outputs.size() != 1) {
    return Failure{fmt::format("{} needs an input, a scale and one output", node.op_type)};
  }
  QuantizeLinearSpec spec;
  spec.quantize = quantize;
  spec.input = node.input(0);
  spec.output = node.outputs[0];
  const std::optional<double> scale = scalar_input(graph, node, 1);
  const std::optional<double> zero = zero_point_input(graph, node, 2);
  if (!scale || !zero) {
    return Failure{fmt::format("{} with a scale or zero point per axis or computed at run time",
                               node.op_type)};
  }
  spec.scale = static_cast<float>(*scale);
  spec.zero_point = static_cast<std::int32_t>(*zero);
  const TensorType& real = graph.type(quantize ? spec.input : spec.output);
  const TensorType& integer = graph.type(quantize ? spec.output : spec.input);
  if (real.dtype != DType::kFloat32 || !eight_bit_type(integer.dtype)) {
    return Failure{fmt::format("{} between other types than float32 and 8 bits", node.op_type)};
  }
  if (real.numel() == 0 || real.rank() == 0 || real.rank() > DNNL_MAX_NDIMS) {
    return Failure{fmt::format("{} of a scalar, an empty tensor or over {} dimensions",
                               node.op_type, DNNL_MAX_NDIMS)};
  }
  return spec;
}

void emit_quantize_linear(ProgramBuilder& builder, const QuantizeLinearSpec& spec) {
  const memory::dims dims = to_dims(builder.shape(spec.input));
  const memory::desc current = builder.desc(spec.input);
  const memory::desc from =
      current.dims() == dims ? current : plain_desc(dims, current.data_type());
  memory src = builder.read(spec.input, from);
  const memory::data_type to_type = *onednn_data_type(builder.graph().type(spec.output).dtype);
  // The output in the input's layout, when that is one an edge can hold.
  memory::desc to = plain_desc(dims, to_type);
  if (std::optional<EdgeLayout> layout = laid_out_edge_layout(from);
      layout && edge_layout_fits(*layout, builder.graph().type(spec.output))) {
    to = edge_desc(builder.shape(spec.output), *layout, to_type);
  }
  dnnl::primitive_attr attr;
  attr.set_output_scales(0, {spec.quantize ? 1.0f / spec.scale : spec.scale});
  const int zero_point_arg = spec.quantize ? DNNL_ARG_TO : DNNL_ARG_FROM;
  if (spec.zero_point != 0) attr.set_zero_points(zero_point_arg, 0, {DNNL_RUNTIME_S32_VAL});
  const dnnl::reorder::primitive_desc pd(builder.engine(), src.get_desc(), builder.engine(), to,
                                         attr);
  memory dst = builder.output_memory(spec.output, to);
  std::unordered_map<int, memory> args{{DNNL_ARG_FROM, src}, {DNNL_ARG_TO, dst}};
  if (spec.zero_point != 0) {
    args[DNNL_ARG_ATTR_ZERO_POINTS | zero_point_arg] = builder.zero_point_memory(spec.zero_point);
  }
  builder.add(dnnl::reorder(pd), std::move(args));
  builder.define(spec.output, dst);
}

memory dequantized(ProgramBuilder& builder, ValueId value, float scale, std::int32_t zero_point,
                   const memory::desc& layout) {
  memory src = builder.read(value, layout);
  const memory::desc f32 = layout_like(layout, layout.dims(), memory::data_type::f32);
  memory dst(f32, builder.engine());
  dnnl::primitive_attr attr;
  attr.set_output_scales(0, {scale});
  attr.set_zero_points(DNNL_ARG_FROM, 0, {DNNL_RUNTIME_S32_VAL});
  const dnnl::reorder::primitive_desc pd(builder.engine(), layout, builder.engine(), f32, attr);
  builder.add(dnnl::reorder(pd),
              {{DNNL_ARG_FROM, src},
               {DNNL_ARG_TO, dst},
               {DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_FROM, builder.zero_point_memory(zero_point)}});
  return dst;
}

}  // namespace collage::onednn
