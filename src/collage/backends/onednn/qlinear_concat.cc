#include "collage/backends/onednn/qlinear_concat.h"

#include <fmt/format.h>

#include <optional>
#include <unordered_map>

#include "collage/backends/onednn/layout.h"
#include "collage/backends/onednn/node_checks.h"

namespace collage::onednn {
namespace {

// The dense channels-last descriptor of 4-D `dims` (plain otherwise).
memory::desc concat_desc(const memory::dims& dims, memory::data_type type) {
  if (dims.size() == 4) return memory::desc(dims, type, memory::format_tag::nhwc);
  return plain_desc(dims, type);
}

// The attributes of the reorder that requantizes one part.
dnnl::primitive_attr requantize_attr(const QLinearConcatSpec::Part& part,
                                     std::int32_t dst_zero_point) {
  dnnl::primitive_attr attr;
  attr.set_output_scales(0, {part.scale});
  if (part.zero_point != 0) attr.set_zero_points(DNNL_ARG_FROM, 0, {DNNL_RUNTIME_S32_VAL});
  if (dst_zero_point != 0) attr.set_zero_points(DNNL_ARG_TO, 0, {DNNL_RUNTIME_S32_VAL});
  return attr;
}

}  // namespace

Result<QLinearConcatSpec> qlinear_concat_spec(const Graph& graph, const Node& node) {
  if (node.domain != "com.microsoft" || node.op_type != "QLinearConcat") {
    return Failure{fmt::format("{} is not a QLinearConcat", node.op_type)};
  }
  if (node.outputs.size() != 1 || node.inputs.size() < 5 || (node.inputs.size() - 2) % 3 != 0) {
    return Failure{"QLinearConcat needs Y_scale, Y_zero_point and three inputs per part"};
  }
  QLinearConcatSpec spec;
  spec.output = node.outputs[0];
  const TensorType& y = graph.type(spec.output);
  if (y.dtype != DType::kUInt8 && y.dtype != DType::kInt8) {
    return Failure{"QLinearConcat of other than 8-bit values"};
  }
  spec.type = *onednn_data_type(y.dtype);
  const std::optional<double> y_scale = scalar_input(graph, node, 0);
  const std::optional<double> y_zero = zero_point_input(graph, node, 1);
  if (!y_scale || !y_zero) return Failure{"QLinearConcat with its output's parameters computed"};
  spec.zero_point = static_cast<std::int32_t>(*y_zero);
  const int rank = y.rank();
  std::int64_t axis = node.attributes.get_int("axis", 0);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank || rank > DNNL_MAX_NDIMS) return Failure{"QLinearConcat axis"};
  spec.axis = static_cast<int>(axis);
  for (std::size_t first = 2; first < node.inputs.size(); first += 3) {
    const ValueId value = node.input(first);
    const std::optional<double> scale = scalar_input(graph, node, first + 1);
    const std::optional<double> zero = zero_point_input(graph, node, first + 2);
    if (value == kNoValue || graph.type(value).dtype != y.dtype ||
        graph.type(value).rank() != rank || !scale || !zero || graph.type(value).numel() == 0) {
      return Failure{"QLinearConcat part of another type or with computed parameters"};
    }
    spec.parts.push_back(
        {value, static_cast<float>(*scale / *y_scale), static_cast<std::int32_t>(*zero)});
  }
  // oneDNN must have a reorder that requantizes with zero points.
  try {
    static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
    const memory::desc md({1, 2, 2, 2}, spec.type, memory::format_tag::nhwc);
    for (const QLinearConcatSpec::Part& part : spec.parts) {
      dnnl::reorder::primitive_desc(engine, md, engine, md, requantize_attr(part, spec.zero_point));
    }
  } catch (const dnnl::error&) {
    return Failure{"oneDNN has no requantizing reorder with these zero points"};
  }
  return spec;
}

void emit_qlinear_concat(ProgramBuilder& builder, const QLinearConcatSpec& spec) {
  const memory::dims dst_dims = to_dims(builder.shape(spec.output));
  const memory::desc dst_md = concat_desc(dst_dims, spec.type);
  memory dst = builder.output_memory(spec.output, dst_md);
  memory::dims offsets(dst_dims.size(), 0);
  for (const QLinearConcatSpec::Part& part : spec.parts) {
    const memory::dims dims = to_dims(builder.shape(part.value));
    const memory::desc part_md = dst.get_desc().submemory_desc(dims, offsets);
    memory src = builder.read(part.value, builder.desc(part.value));
    memory to = builder.view_of(dst, part_md);
    const dnnl::reorder::primitive_desc pd(src.get_engine(), src.get_desc(), to.get_engine(),
                                           part_md, requantize_attr(part, spec.zero_point));
    std::unordered_map<int, memory> args{{DNNL_ARG_FROM, src}, {DNNL_ARG_TO, to}};
    if (part.zero_point != 0) {
      args[DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_FROM] = builder.zero_point_memory(part.zero_point);
    }
    if (spec.zero_point != 0) {
      args[DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_TO] = builder.zero_point_memory(spec.zero_point);
    }
    builder.add(dnnl::reorder(pd), std::move(args));
    offsets[static_cast<std::size_t>(spec.axis)] += dims[static_cast<std::size_t>(spec.axis)];
  }
  builder.define(spec.output, dst);
}

}  // namespace collage::onednn
