#include "collage/backends/onednn/qlinear_conv.h"

#include <fmt/format.h>

#include <optional>
#include <string>
#include <unordered_map>
#include <utility>

#include "collage/backends/onednn/convolution.h"
#include "collage/backends/onednn/layout.h"
#include "collage/backends/onednn/node_checks.h"
#include "collage/ir/window.h"

namespace collage::onednn {

Result<QLinearConvSpec> qlinear_conv_spec(const Graph& graph, const Node& node) {
  const bool transposed = node.domain == "collage" && node.op_type == "QLinearConvTranspose";
  if (!transposed && (!in_onnx_domain(node) || node.op_type != "QLinearConv")) {
    return Failure{fmt::format("{} is not a QLinearConv or QLinearConvTranspose", node.op_type)};
  }
  const std::string& op = node.op_type;
  if (node.inputs.size() < 8 || node.outputs.size() != 1 || node.input(0) == kNoValue) {
    return Failure{fmt::format("{} needs eight or nine inputs and one output", op)};
  }
  QLinearConvSpec spec;
  spec.transposed = transposed;
  spec.input = node.input(0);
  spec.weights = node.input(3);
  spec.output = node.outputs[0];
  const TensorType& x = graph.type(spec.input);
  const TensorType& w = graph.type(spec.weights);
  const TensorType& y = graph.type(spec.output);
  const std::optional<memory::data_type> src = eight_bit_type(x.dtype);
  const std::optional<memory::data_type> dst = eight_bit_type(y.dtype);
  if (!src || !dst || w.dtype != DType::kInt8) {
    return Failure{fmt::format("{} of {} by {} into {}: oneDNN takes u8 or s8 data and s8 weights",
                               op, dtype_name(x.dtype), dtype_name(w.dtype), dtype_name(y.dtype))};
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
    return Failure{fmt::format("{} with weights, scales or zero points computed at run time", op)};
  }
  if (x.rank() < 3 || x.rank() > 5 || w.rank() != x.rank() || y.rank() != x.rank()) {
    return Failure{fmt::format("{} supports 1 to 3 spatial dims with matching ranks", op)};
  }
  spec.out_channels = y.shape[1];
  spec.groups = node.attributes.get_int("group", 1);
  // Conv weights are [O, I/g, k...], ConvTranspose weights [I, O/g, k...].
  const bool weights_fit = transposed
                               ? w.shape[0] == x.shape[1] && w.shape[1] * spec.groups == y.shape[1]
                               : w.shape[0] == y.shape[1] && w.shape[1] * spec.groups == x.shape[1];
  if (spec.groups < 1 || x.shape[1] % spec.groups != 0 || !weights_fit ||
      y.shape[0] != x.shape[0]) {
    return Failure{fmt::format("{} weights do not match the channels and group", op)};
  }
  const std::int64_t m = spec.out_channels;
  // A transposed convolution's weights have one scale per output channel of a group.
  const std::int64_t w_channels = transposed ? w.shape[1] : m;
  if (x_scale->numel() != 1 || x_zero->numel() != 1 || y_scale->numel() != 1 ||
      y_zero->numel() != 1 || (w_scale->numel() != 1 && w_scale->numel() != w_channels) ||
      (w_zero->numel() != 1 && w_zero->numel() != w_channels)) {
    return Failure{fmt::format("{} scales or zero points of unsupported sizes", op)};
  }
  for (std::int64_t i = 0; i < w_zero->numel(); ++i) {
    if (w_zero->number_at(i) != 0.0) {
      return Failure{fmt::format("{} with a nonzero weight zero point (oneDNN takes none)", op)};
    }
  }
  if (node.inputs.size() > 8 && node.input(8) != kNoValue) {
    const TensorType& bias = graph.type(node.input(8));
    if (bias.dtype != DType::kInt32 || bias.shape != Shape{m} ||
        constant_input(graph, node, 8) == nullptr) {
      return Failure{fmt::format("{} bias is not a constant int32 [{}]", op, m)};
    }
    spec.bias = node.input(8);
  }
  Result<WindowDims> window = convolution_window(node, transposed, x.shape, w.shape, y.shape);
  if (!window) return Failure{window.error()};
  spec.window = std::move(window.value());
  spec.src_dims = to_dims(x.shape);
  spec.dst_dims = to_dims(y.shape);
  if (transposed) {
    WeightsView view = deconvolution_weights(spec.groups, w.shape);
    spec.weights_dims = std::move(view.dims);
    spec.weights_strides = std::move(view.strides);
  } else {
    memory::dims dims = to_dims(w.shape);
    if (spec.groups > 1) {
      dims[0] /= spec.groups;
      dims.insert(dims.begin(), spec.groups);
    }
    spec.weights_dims = dims;
    spec.weights_strides = row_major_strides(dims);
  }
  // float32 products, as QLinearConv's definition forms the ratio.
  const float xs = static_cast<float>(x_scale->number_at(0));
  const float ys = static_cast<float>(y_scale->number_at(0));
  // A transposed convolution's group-cyclic scales, spelled out per channel.
  const std::int64_t scales = w_scale->numel() == 1 ? 1 : m;
  for (std::int64_t i = 0; i < scales; ++i) {
    spec.output_scales.push_back(xs * static_cast<float>(w_scale->number_at(i % w_scale->numel())) /
                                 ys);
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
  const memory::desc src_md = any_desc(spec.src_dims, spec.src_type);
  const memory::desc weights_md = any_desc(spec.weights_dims, memory::data_type::s8);
  const memory::desc dst_md = any_desc(spec.dst_dims, spec.dst_type);
  // Both primitive descriptors answer the same queries.
  auto primitive_desc = [&]() -> std::pair<dnnl::primitive, dnnl::primitive_desc> {
    if (spec.transposed) {
      const dnnl::deconvolution_forward::desc desc(
          dnnl::prop_kind::forward_inference, dnnl::algorithm::deconvolution_direct, src_md,
          weights_md, bias_md, dst_md, w.strides, w.onednn_dilations(), w.padding_l, w.padding_r);
      const dnnl::deconvolution_forward::primitive_desc pd(desc, attr, builder.engine());
      return {dnnl::deconvolution_forward(pd), pd};
    }
    const dnnl::convolution_forward::desc desc(
        dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src_md, weights_md,
        bias_md, dst_md, w.strides, w.onednn_dilations(), w.padding_l, w.padding_r);
    const dnnl::convolution_forward::primitive_desc pd(desc, attr, builder.engine());
    return {dnnl::convolution_forward(pd), pd};
  };
  auto [primitive, pd] = primitive_desc();

  const memory::desc weights_view(spec.weights_dims, memory::data_type::s8, spec.weights_strides);
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
  builder.add(std::move(primitive), std::move(args));
  builder.define(spec.output, dst);
}

}  // namespace collage::onednn
