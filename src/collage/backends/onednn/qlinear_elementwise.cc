#include "collage/backends/onednn/qlinear_elementwise.h"

#include <fmt/format.h>

#include <optional>
#include <unordered_map>
#include <utility>

#include "collage/backends/onednn/binary.h"
#include "collage/backends/onednn/layout.h"
#include "collage/backends/onednn/node_checks.h"
#include "collage/backends/onednn/post_ops.h"
#include "collage/backends/onednn/quantize_linear.h"

namespace collage::onednn {
namespace {

// The operand at inputs `first` (value), `first + 1` (scale) and `first + 2`
// (zero point, 0 when absent), or nullopt when a parameter is computed.
std::optional<QLinearBinarySpec::Operand> operand_at(const Graph& graph, const Node& node,
                                                     std::size_t first) {
  const std::optional<double> scale = scalar_input(graph, node, first + 1);
  const std::optional<double> zero = zero_point_input(graph, node, first + 2);
  if (node.input(first) == kNoValue || !scale || !zero) return std::nullopt;
  return QLinearBinarySpec::Operand{node.input(first), static_cast<float>(*scale),
                                    static_cast<std::int32_t>(*zero)};
}

// A float32 scalar constant of `like`'s rank, described in its layout: the
// second source of a binary primitive that only shifts its first (oneDNN
// runs a scalar of another layout with its reference kernel).
memory scalar_memory(ProgramBuilder& builder, const memory::desc& like, float value) {
  const Shape ones(static_cast<std::size_t>(like.dims().size()), 1);
  const ValueId constant = builder.add_constant(Tensor::from_vector<float>({value}, ones));
  return builder.read(constant, layout_like(like, to_dims(ones), memory::data_type::f32));
}

// The one binary primitive of a quantized elementwise op: `op` over a's
// 8-bit values scaled by a's scale and the second source `second` (scaled
// by `second_scale`), then `extra` post-ops, then y = alpha·r + beta, stored
// as 8-bit `output` (rounded, saturated). Post-op binary operands are
// `operands`, in the order of `extra`'s binary entries.
void emit_requantizing_binary(ProgramBuilder& builder, dnnl::algorithm op,
                              const QLinearBinarySpec::Operand& a, const memory& a_memory,
                              const memory& second, float second_scale, dnnl::post_ops extra,
                              const std::vector<memory>& operands, float alpha, float beta,
                              const QLinearBinarySpec::Operand& output, memory::data_type type) {
  dnnl::primitive_attr attr;
  attr.set_scales(DNNL_ARG_SRC_0, 0, {a.scale});
  if (second_scale != 1.0f) attr.set_scales(DNNL_ARG_SRC_1, 0, {second_scale});
  extra.append_eltwise(1.0f, dnnl::algorithm::eltwise_linear, alpha, beta);
  attr.set_post_ops(extra);
  const memory::desc dst_md = layout_like(a_memory.get_desc(), a_memory.get_desc().dims(), type);
  const dnnl::binary::primitive_desc pd(
      dnnl::binary::desc(op, a_memory.get_desc(), second.get_desc(), dst_md), attr,
      builder.engine());
  memory dst = builder.output_memory(output.value, pd.dst_desc());
  std::unordered_map<int, memory> args{
      {DNNL_ARG_SRC_0, a_memory}, {DNNL_ARG_SRC_1, second}, {DNNL_ARG_DST, dst}};
  int index = 0;
  for (const memory& operand : operands) {
    while (extra.kind(index) != dnnl::primitive::kind::binary) ++index;
    args[DNNL_ARG_ATTR_MULTIPLE_POST_OP(index) | DNNL_ARG_SRC_1] = operand;
    ++index;
  }
  builder.add(dnnl::binary(pd), std::move(args));
  builder.define(output.value, dst);
}

}  // namespace

Result<QLinearBinarySpec> qlinear_binary_spec(const Graph& graph, const Node& node) {
  if (node.domain != "com.microsoft" ||
      (node.op_type != "QLinearAdd" && node.op_type != "QLinearMul")) {
    return Failure{fmt::format("{} is not a QLinearAdd or QLinearMul", node.op_type)};
  }
  if (node.inputs.size() < 7 || node.outputs.size() != 1) {
    return Failure{
        fmt::format("{} needs two quantized inputs and the output's scale", node.op_type)};
  }
  QLinearBinarySpec spec;
  spec.algorithm =
      node.op_type == "QLinearAdd" ? dnnl::algorithm::binary_add : dnnl::algorithm::binary_mul;
  const std::optional<QLinearBinarySpec::Operand> a = operand_at(graph, node, 0);
  const std::optional<QLinearBinarySpec::Operand> b = operand_at(graph, node, 3);
  const std::optional<double> y_scale = scalar_input(graph, node, 6);
  const std::optional<double> y_zero = zero_point_input(graph, node, 7);
  if (!a || !b || !y_scale || !y_zero) {
    return Failure{fmt::format("{} with scales or zero points computed at run time", node.op_type)};
  }
  spec.a = *a;
  spec.b = *b;
  spec.y = {node.outputs[0], static_cast<float>(*y_scale), static_cast<std::int32_t>(*y_zero)};
  const std::optional<memory::data_type> type = eight_bit_type(graph.type(spec.y.value).dtype);
  if (!type || !eight_bit_type(graph.type(spec.a.value).dtype) ||
      !eight_bit_type(graph.type(spec.b.value).dtype)) {
    return Failure{fmt::format("{} of other than 8-bit values", node.op_type)};
  }
  spec.type = *type;
  const Shape& out = graph.type(spec.y.value).shape;
  const int rank = std::max(1, static_cast<int>(out.size()));
  if (rank > DNNL_MAX_NDIMS || graph.type(spec.y.value).numel() == 0) {
    return Failure{fmt::format("{} of an empty tensor or of over {} dimensions", node.op_type,
                               DNNL_MAX_NDIMS)};
  }
  const memory::dims out_dims = to_dims(out);
  auto dims_of = [&](ValueId value) { return align_rank(to_dims(graph.type(value).shape), rank); };
  if (dims_of(spec.a.value) != out_dims) std::swap(spec.a, spec.b);
  if (dims_of(spec.a.value) != out_dims) {
    return Failure{
        fmt::format("{} broadcasts both inputs; oneDNN broadcasts only one", node.op_type)};
  }
  const memory::dims b_dims = dims_of(spec.b.value);
  for (std::size_t i = 0; i < b_dims.size(); ++i) {
    if (b_dims[i] != 1 && b_dims[i] != out_dims[i]) {
      return Failure{fmt::format("{} inputs do not broadcast to the output", node.op_type)};
    }
  }
  return spec;
}

void emit_qlinear_binary(ProgramBuilder& builder, const QLinearBinarySpec& spec) {
  const memory::dims out_dims = to_dims(builder.shape(spec.y.value));
  const int rank = static_cast<int>(out_dims.size());
  const memory::dims b_dims = align_rank(to_dims(builder.shape(spec.b.value)), rank);
  const bool add = spec.algorithm == dnnl::algorithm::binary_add;
  // A product multiplies by b's 8-bit values directly when b's zero point is
  // 0: of two full operands, b is the one with that zero point.
  QLinearBinarySpec::Operand a_operand = spec.a;
  QLinearBinarySpec::Operand b_operand = spec.b;
  if (!add && b_dims == out_dims && b_operand.zero_point != 0 && a_operand.zero_point == 0) {
    std::swap(a_operand, b_operand);
  }
  const memory::desc current = builder.desc(a_operand.value);
  const memory::desc layout_a = layout_like(current, out_dims, current.data_type());
  const memory::data_type b_type = builder.desc(b_operand.value).data_type();
  const memory::desc layout_b =
      b_dims == out_dims
          ? layout_like(layout_a, b_dims, b_type)
          : broadcast_operand_desc(builder.engine(), spec.algorithm, layout_a, b_dims, b_type);
  memory a = builder.read(a_operand.value, layout_a);
  const float alpha = 1.0f / spec.y.scale;
  if (add) {
    // y = (s_a·a + s_b·b)/s_y + z_y − (s_a·z_a + s_b·z_b)/s_y.
    const double shift = (double{a_operand.scale} * a_operand.zero_point +
                          double{b_operand.scale} * b_operand.zero_point) /
                         spec.y.scale;
    emit_requantizing_binary(builder, spec.algorithm, a_operand, a,
                             builder.read(b_operand.value, layout_b), b_operand.scale, {}, {},
                             alpha, static_cast<float>(spec.y.zero_point - shift), spec.y,
                             spec.type);
    return;
  }
  // y = (s_a·a − s_a·z_a)·B/s_y + z_y: B is b's 8-bit values, with s_b
  // folded into the last scale, when b's zero point is 0, else b's real
  // values, dequantized by a reorder (b is then usually the broadcast
  // operand, a few values).
  const bool raw_b = b_operand.zero_point == 0;
  memory b = raw_b ? builder.read(b_operand.value, layout_b)
                   : dequantized(builder, b_operand.value, b_operand.scale, b_operand.zero_point,
                                 layout_b);
  dnnl::post_ops times_b;
  times_b.append_binary(dnnl::algorithm::binary_mul, b.get_desc());
  emit_requantizing_binary(
      builder, dnnl::algorithm::binary_add, a_operand, a,
      scalar_memory(builder, layout_a, -a_operand.scale * static_cast<float>(a_operand.zero_point)),
      1.0f, times_b, {b}, raw_b ? b_operand.scale * alpha : alpha,
      static_cast<float>(spec.y.zero_point), spec.y, spec.type);
}

Result<QLinearUnarySpec> qlinear_unary_spec(const Graph& graph, const Node& node) {
  const bool microsoft = node.domain == "com.microsoft" &&
                         (node.op_type == "QLinearSigmoid" || node.op_type == "QLinearLeakyRelu");
  const bool collage = node.domain == "collage" &&
                       (node.op_type == "QLinearHardSwish" || node.op_type == "QLinearHardSigmoid");
  if (!microsoft && !collage) {
    return Failure{fmt::format(
        "{} is not a QLinearSigmoid, QLinearLeakyRelu, QLinearHardSwish or QLinearHardSigmoid",
        node.op_type)};
  }
  if (node.inputs.size() < 4 || node.outputs.size() != 1) {
    return Failure{fmt::format("{} needs X and the scales of X and Y", node.op_type)};
  }
  QLinearUnarySpec spec;
  const std::optional<QLinearBinarySpec::Operand> x = operand_at(graph, node, 0);
  const std::optional<double> y_scale = scalar_input(graph, node, 3);
  const std::optional<double> y_zero = zero_point_input(graph, node, 4);
  if (!x || !y_scale || !y_zero) {
    return Failure{fmt::format("{} with scales or zero points computed at run time", node.op_type)};
  }
  spec.x = *x;
  spec.y = {node.outputs[0], static_cast<float>(*y_scale), static_cast<std::int32_t>(*y_zero)};
  const std::optional<memory::data_type> type = eight_bit_type(graph.type(spec.y.value).dtype);
  if (!type || !eight_bit_type(graph.type(spec.x.value).dtype)) {
    return Failure{fmt::format("{} of other than 8-bit values", node.op_type)};
  }
  const TensorType& y = graph.type(spec.y.value);
  if (y.rank() == 0 || y.rank() > DNNL_MAX_NDIMS || y.numel() == 0 ||
      graph.type(spec.x.value).shape != y.shape) {
    return Failure{fmt::format("{} of a scalar, an empty tensor or over {} dimensions",
                               node.op_type, DNNL_MAX_NDIMS)};
  }
  spec.type = *type;
  using dnnl::algorithm;
  if (node.op_type == "QLinearSigmoid") {
    spec.steps = {{algorithm::eltwise_logistic}};
  } else if (node.op_type == "QLinearLeakyRelu") {
    spec.steps = {{algorithm::eltwise_relu, node.attributes.get_float("alpha", 0.01f)}};
  } else if (node.op_type == "QLinearHardSwish") {
    spec.steps = {{algorithm::eltwise_hardswish}};
  } else {
    spec.steps = {{algorithm::eltwise_linear, node.attributes.get_float("alpha", 0.2f),
                   node.attributes.get_float("beta", 0.5f)},
                  {algorithm::eltwise_clip, 0.0f, 1.0f}};
  }
  return spec;
}

void emit_qlinear_unary(ProgramBuilder& builder, const QLinearUnarySpec& spec) {
  // y = f(s_x·x − s_x·z_x)/s_y + z_y in one binary primitive: the shift as
  // its second source, f and the requantization as post-ops. A first linear
  // step a·v + b of f folds into the primitive's own scale and shift: this
  // oneDNN's binary kernel applies a second eltwise_linear post-op with the
  // first one's parameters.
  const memory::dims dims = to_dims(builder.shape(spec.y.value));
  const memory::desc current = builder.desc(spec.x.value);
  memory x = builder.read(spec.x.value, layout_like(current, dims, current.data_type()));
  QLinearBinarySpec::Operand scaled = spec.x;
  float shift = -spec.x.scale * static_cast<float>(spec.x.zero_point);
  std::size_t first = 0;
  if (!spec.steps.empty() && spec.steps[0].algorithm == dnnl::algorithm::eltwise_linear) {
    scaled.scale *= spec.steps[0].alpha;
    shift = shift * spec.steps[0].alpha + spec.steps[0].beta;
    first = 1;
  }
  dnnl::post_ops function;
  for (std::size_t i = first; i < spec.steps.size(); ++i) {
    const EltwiseStep& step = spec.steps[i];
    function.append_eltwise(1.0f, step.algorithm, step.alpha, step.beta);
  }
  emit_requantizing_binary(builder, dnnl::algorithm::binary_add, scaled, x,
                           scalar_memory(builder, x.get_desc(), shift), 1.0f, function, {},
                           1.0f / spec.y.scale, static_cast<float>(spec.y.zero_point), spec.y,
                           spec.type);
}

}  // namespace collage::onednn
