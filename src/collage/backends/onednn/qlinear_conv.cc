#include "collage/backends/onednn/qlinear_conv.h"

#include <fmt/format.h>

#include <optional>
#include <string>
#include <unordered_map>

#include "collage/backends/onednn/layout.h"
#include "collage/backends/onednn/node_checks.h"
#include "collage/ir/window.h"

namespace collage::onednn {

Result<QLinearConvSpec> qlinear_conv_spec(const Graph& graph, const Node& node) {
  if (!in_onnx_domain(node) || node.op_type != "QLinearConv") {
    return Failure{fmt::format("{} is not a QLinearConv", node.op_type)};
  }
  if (node.inputs.size() < 8 || node.outputs.size() != 1 || node.input(0) == kNoValue) {
    return Failure{"QLinearConv needs eight or nine inputs and one output"};
  }
  QLinearConvSpec spec;
  spec.input = node.input(0);
  spec.weights = node.input(3);
  spec.output = node.outputs[0];
  const TensorType& x = graph.type(spec.input);
  const TensorType& w = graph.type(spec.weights);
  const TensorType& y = graph.type(spec.output);
  const std::optional<memory::data_type> src = eight_bit_type(x.dtype);
  const std::optional<memory::data_type> dst = eight_bit_type(y.dtype);
  if (!src || !dst || w.dtype != DType::kInt8) {
    return Failure{
        fmt::format("QLinearConv of {} by {} into {}: oneDNN takes u8 or s8 data and "
                    "s8 weights",
                    dtype_name(x.dtype), dtype_name(w.dtype), dtype_name(y.dtype))};
  }
  spec.src_type = *src;
  spec.dst_type = *dst;
  const Tensor* x_scale = constant_input(graph, node, 1);
  const Tensor* x_zero = constant_input(graph, node, 2);
  const Tensor* w_values = constant_input(graph, node, 3);
  const Tensor* w_scale = constant_input(graph, node, 4);
  const Tensor* w_zero = constant_input(graph, node, 5);
  const Tensor* y_scale = constant_input(graph, node, 6);
  const Tensor* y_zero = constant_input(graph, node, 7);
  if (x_scale == nullptr || x_zero == nullptr || w_values == nullptr || w_scale == nullptr ||
      w_zero == nullptr || y_scale == nullptr || y_zero == nullptr) {
    return Failure{"QLinearConv with weights, scales or zero points computed at run time"};
  }
  if (x.rank() < 3 || x.rank() > 5 || w.rank() != x.rank() || y.rank() != x.rank()) {
    return Failure{"QLinearConv supports 1 to 3 spatial dims with matching ranks"};
  }
  spec.out_channels = y.shape[1];
  spec.groups = node.attributes.get_int("group", 1);
  if (spec.groups < 1 || x.shape[1] % spec.groups != 0 || w.shape[0] != y.shape[1] ||
      w.shape[1] * spec.groups != x.shape[1] || y.shape[0] != x.shape[0]) {
    return Failure{"QLinearConv weights do not match the channels and group"};
  }
  const std::int64_t m = spec.out_channels;
  if (x_scale->numel() != 1 || x_zero->numel() != 1 || y_scale->numel() != 1 ||
      y_zero->numel() != 1 || (w_scale->numel() != 1 && w_scale->numel() != m) ||
      (w_zero->numel() != 1 && w_zero->numel() != m)) {
    return Failure{"QLinearConv scales or zero points of unsupported sizes"};
  }
  for (std::int64_t i = 0; i < w_zero->numel(); ++i) {
    if (w_zero->number_at(i) != 0.0) {
      return Failure{"QLinearConv with a nonzero weight zero point (oneDNN takes none)"};
    }
  }
  if (node.inputs.size() > 8 && node.input(8) != kNoValue) {
    const TensorType& bias = graph.type(node.input(8));
    if (bias.dtype != DType::kInt32 || bias.shape != Shape{m} ||
        constant_input(graph, node, 8) == nullptr) {
      return Failure{fmt::format("QLinearConv bias is not a constant int32 [{}]", m)};
    }
    spec.bias = node.input(8);
  }
  const Shape in(x.shape.begin() + 2, x.shape.end());
  const Shape kernel(w.shape.begin() + 2, w.shape.end());
  Result<Window> window = forward_window(node, in, kernel);
  if (!window) return Failure{window.error()};
  if (window->output_shape() != Shape(y.shape.begin() + 2, y.shape.end())) {
    return Failure{"QLinearConv output shape disagrees with its attributes"};
  }
  spec.window = forward_dims(*window);
  spec.src_dims = to_dims(x.shape);
  spec.dst_dims = to_dims(y.shape);
  memory::dims dims = to_dims(w.shape);
  if (spec.groups > 1) {
    dims[0] /= spec.groups;
    dims.insert(dims.begin(), spec.groups);
  }
  spec.weights_dims = dims;
  // float32 products, as QLinearConv's definition forms the ratio.
  const float xs = static_cast<float>(x_scale->number_at(0));
  const float ys = static_cast<float>(y_scale->number_at(0));
  for (std::int64_t i = 0; i < w_scale->numel(); ++i) {
    spec.output_scales.push_back(xs * static_cast<float>(w_scale->number_at(i)) / ys);
  }
  spec.src_zero_point = static_cast<std::int32_t>(x_zero->number_at(0));
  spec.dst_zero_point = static_cast<std::int32_t>(y_zero->number_at(0));
  return spec;
}

void emit_qlinear_conv(ProgramBuilder& builder, const QLinearConvSpec& spec) {
  dnnl::primitive_attr attr;
  // Mask bit 1: one scale per index of the output channel axis.
  attr.set_output_scales(spec.output_scales.size() > 1 ? 1 << 1 : 0, spec.output_scales);
  if (spec.src_zero_point != 0) attr.set_zero_points(DNNL_ARG_SRC, 0, {DNNL_RUNTIME_S32_VAL});
  if (spec.dst_zero_point != 0) attr.set_zero_points(DNNL_ARG_DST, 0, {DNNL_RUNTIME_S32_VAL});
  const memory::dims bias_dims = {spec.out_channels};
  const memory::desc bias_md =
      spec.bias != kNoValue ? plain_desc(bias_dims, memory::data_type::s32) : memory::desc();
  const WindowDims& w = spec.window;
  dnnl::convolution_forward::desc desc(
      dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
      any_desc(spec.src_dims, spec.src_type), any_desc(spec.weights_dims, memory::data_type::s8),
      bias_md, any_desc(spec.dst_dims, spec.dst_type), w.strides, w.onednn_dilations(), w.padding_l,
      w.padding_r);
  const dnnl::convolution_forward::primitive_desc pd(desc, attr, builder.engine());

  const memory::desc weights_view = plain_desc(spec.weights_dims, memory::data_type::s8);
  std::unordered_map<int, memory> args{
      {DNNL_ARG_SRC, builder.read(spec.input, pd.src_desc())},
      {DNNL_ARG_WEIGHTS, builder.read_view(spec.weights, weights_view, pd.weights_desc())}};
  if (spec.bias != kNoValue) args[DNNL_ARG_BIAS] = builder.read_plain(spec.bias, bias_dims);
  if (spec.src_zero_point != 0) {
    args[DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC] = builder.zero_point_memory(spec.src_zero_point);
  }
  if (spec.dst_zero_point != 0) {
    args[DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_DST] = builder.zero_point_memory(spec.dst_zero_point);
  }
  memory dst = builder.output_memory(spec.output, pd.dst_desc());
  args[DNNL_ARG_DST] = dst;
  builder.add(dnnl::primitive(pd), std::move(args));
  builder.define(spec.output, dst);
}

}  // namespace collage::onednn
