#include "collage/backends/onednn/qlinear_matmul.h"

#include <fmt/format.h>

#include <optional>
#include <string>
#include <unordered_map>

#include "collage/backends/onednn/layout.h"
#include "collage/backends/onednn/node_checks.h"

namespace collage::onednn {
namespace {

// Input positions of the quantization parameters in the two ops.
struct Positions {
  std::size_t a_scale, a_zero, b, b_scale, b_zero, bias, y_scale, y_zero;
};
constexpr Positions kQLinearMatMul = {1, 2, 3, 4, 5, 99, 6, 7};
constexpr Positions kQGemm = {1, 2, 3, 4, 5, 6, 7, 8};

}  // namespace

Result<QLinearMatMulSpec> qlinear_matmul_spec(const Graph& graph, const Node& node) {
  const bool gemm = node.domain == "com.microsoft" && node.op_type == "QGemm";
  if (!gemm && !(in_onnx_domain(node) && node.op_type == "QLinearMatMul")) {
    return Failure{fmt::format("{} is not a QLinearMatMul or QGemm", node.op_type)};
  }
  const Positions at = gemm ? kQGemm : kQLinearMatMul;
  if (node.outputs.size() != 1 || node.inputs.size() < (gemm ? 5u : 8u)) {
    return Failure{fmt::format("{} with missing inputs", node.op_type)};
  }
  QLinearMatMulSpec spec;
  spec.a = node.input(0);
  spec.b = node.input(at.b);
  spec.output = node.outputs[0];
  const TensorType& a = graph.type(spec.a);
  const TensorType& b = graph.type(spec.b);
  const TensorType& y = graph.type(spec.output);
  const std::optional<memory::data_type> a_type = eight_bit_type(a.dtype);
  const Tensor* b_values = constant_input(graph, node, at.b);
  if (!a_type || b.dtype != DType::kInt8 || b_values == nullptr || b.rank() != 2) {
    return Failure{
        fmt::format("{}: oneDNN takes u8 or s8 A and a constant s8 matrix B", node.op_type)};
  }
  const bool float_output =
      gemm && (node.inputs.size() <= at.y_scale || node.input(at.y_scale) == kNoValue);
  const std::optional<memory::data_type> y_type =
      float_output ? std::optional(memory::data_type::f32) : eight_bit_type(y.dtype);
  if (!y_type || (float_output && y.dtype != DType::kFloat32)) {
    return Failure{fmt::format("{} output of type {}", node.op_type, dtype_name(y.dtype))};
  }
  spec.a_type = *a_type;
  spec.dst_type = *y_type;
  const bool trans_a = gemm && node.attributes.get_int("transA", 0) != 0;
  const bool trans_b = gemm && node.attributes.get_int("transB", 0) != 0;
  if (trans_a || a.rank() < 2 || (gemm && a.rank() != 2)) {
    return Failure{
        fmt::format("{}: A must be a matrix (or a batch of them), not transposed", node.op_type)};
  }
  const std::int64_t k = a.shape.back();
  const std::int64_t n = trans_b ? b.shape[0] : b.shape[1];
  if ((trans_b ? b.shape[1] : b.shape[0]) != k || y.shape.back() != n) {
    return Failure{fmt::format("{} shapes do not multiply", node.op_type)};
  }
  const Tensor* a_scale = constant_input(graph, node, at.a_scale);
  const Tensor* b_scale = constant_input(graph, node, at.b_scale);
  const Tensor* a_zero = constant_input(graph, node, at.a_zero);
  const Tensor* b_zero = constant_input(graph, node, at.b_zero);
  const Tensor* y_scale = float_output ? nullptr : constant_input(graph, node, at.y_scale);
  const Tensor* y_zero = float_output ? nullptr : constant_input(graph, node, at.y_zero);
  auto absent = [&](std::size_t i) { return i >= node.inputs.size() || node.input(i) == kNoValue; };
  if (a_scale == nullptr || a_scale->numel() != 1 || b_scale == nullptr ||
      (b_scale->numel() != 1 && b_scale->numel() != n) ||
      (a_zero == nullptr && !absent(at.a_zero)) || (a_zero != nullptr && a_zero->numel() != 1) ||
      (b_zero == nullptr && !absent(at.b_zero)) ||
      (!float_output &&
       (y_scale == nullptr || y_scale->numel() != 1 || (y_zero == nullptr && !absent(at.y_zero)) ||
        (y_zero != nullptr && y_zero->numel() != 1)))) {
    return Failure{
        fmt::format("{} with scales or zero points computed at run time or per row", node.op_type)};
  }
  for (std::int64_t i = 0; b_zero != nullptr && i < b_zero->numel(); ++i) {
    if (b_zero->number_at(i) != 0.0) {
      return Failure{
          fmt::format("{} with a nonzero zero point of B (oneDNN takes none)", node.op_type)};
    }
  }
  if (gemm && !absent(at.bias)) {
    const Tensor* c = constant_input(graph, node, at.bias);
    if (c == nullptr || c->dtype() != DType::kInt32 || c->numel() != n ||
        graph.type(node.input(at.bias)).rank() > 2) {
      return Failure{fmt::format("QGemm's C is not a constant int32 row of {}", n)};
    }
    spec.bias = node.input(at.bias);
  }
  // oneDNN wants every operand of A's rank.
  const std::size_t rank = static_cast<std::size_t>(a.rank());
  spec.a_dims = to_dims(a.shape);
  spec.dst_dims = to_dims(y.shape);
  if (spec.dst_dims.size() != rank) return Failure{fmt::format("{} output rank", node.op_type)};
  spec.b_dims = memory::dims(rank, 1);
  spec.b_dims[rank - 2] = k;
  spec.b_dims[rank - 1] = n;
  spec.b_strides = memory::dims(rank, k * n);
  spec.b_strides[rank - 2] = trans_b ? 1 : n;
  spec.b_strides[rank - 1] = trans_b ? k : 1;
  const float alpha = gemm ? node.attributes.get_float("alpha", 1.0f) : 1.0f;
  const float as = static_cast<float>(a_scale->number_at(0));
  const float ys = float_output ? 1.0f : static_cast<float>(y_scale->number_at(0));
  for (std::int64_t i = 0; i < b_scale->numel(); ++i) {
    spec.output_scales.push_back(alpha * as * static_cast<float>(b_scale->number_at(i)) / ys);
  }
  spec.a_zero_point = a_zero != nullptr ? static_cast<std::int32_t>(a_zero->number_at(0)) : 0;
  spec.dst_zero_point = y_zero != nullptr ? static_cast<std::int32_t>(y_zero->number_at(0)) : 0;
  return spec;
}

void emit_qlinear_matmul(ProgramBuilder& builder, const QLinearMatMulSpec& spec) {
  const std::size_t rank = spec.dst_dims.size();
  dnnl::primitive_attr attr;
  // Mask bit rank - 1: one scale per column.
  attr.set_output_scales(spec.output_scales.size() > 1 ? 1 << (rank - 1) : 0, spec.output_scales);
  if (spec.a_zero_point != 0) attr.set_zero_points(DNNL_ARG_SRC, 0, {DNNL_RUNTIME_S32_VAL});
  if (spec.dst_zero_point != 0) attr.set_zero_points(DNNL_ARG_DST, 0, {DNNL_RUNTIME_S32_VAL});
  memory::dims bias_dims(rank, 1);
  bias_dims.back() = spec.dst_dims.back();
  const memory::desc a_md = plain_desc(spec.a_dims, spec.a_type);
  const memory::desc dst_md = plain_desc(spec.dst_dims, spec.dst_type);
  dnnl::matmul::desc desc(
      a_md, any_desc(spec.b_dims, memory::data_type::s8),
      spec.bias != kNoValue ? plain_desc(bias_dims, memory::data_type::s32) : memory::desc(),
      dst_md);
  const dnnl::matmul::primitive_desc pd(desc, attr, builder.engine());
  const memory::desc b_view = strided_desc(spec.b_dims, spec.b_strides, memory::data_type::s8);
  std::unordered_map<int, memory> args{
      {DNNL_ARG_SRC, builder.read(spec.a, a_md)},
      {DNNL_ARG_WEIGHTS, builder.read_view(spec.b, b_view, pd.weights_desc())}};
  if (spec.bias != kNoValue) args[DNNL_ARG_BIAS] = builder.read_plain(spec.bias, bias_dims);
  if (spec.a_zero_point != 0) {
    args[DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC] = builder.zero_point_memory(spec.a_zero_point);
  }
  if (spec.dst_zero_point != 0) {
    args[DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_DST] = builder.zero_point_memory(spec.dst_zero_point);
  }
  memory dst = builder.output_memory(spec.output, pd.dst_desc());
  args[DNNL_ARG_DST] = dst;
  builder.add(dnnl::matmul(pd), std::move(args));
  builder.define(spec.output, dst);
}

}  // namespace collage::onednn
