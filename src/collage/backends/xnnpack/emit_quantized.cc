// Quantized ops on qint8 values: QuantizeLinear and DequantizeLinear,
// QLinearConv, QLinearConvTranspose, QGemm and QLinearMatMul. QLinearAdd
// and QLinearMul are in emit_arithmetic.cc; QLinearGlobalAveragePool,
// MaxPool and reshapes of 8-bit values share the float emitters, the
// builder defining their values as 8-bit. Ops without an int8 kernel here
// run in float32 between converts.
#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "collage/backends/xnnpack/emitters.h"
#include "collage/backends/xnnpack/filter_order.h"
#include "collage/backends/xnnpack/op_support.h"
#include "collage/backends/xnnpack/quantized.h"

namespace collage::xnnpack {
namespace {

// The int32 bias of `node` at input `input` (zeros when absent), the scale
// of each entry input_scale * weight_scale[m] as XNNPACK's qcint32 takes it.
std::vector<std::int32_t> bias_values(const Graph& graph, const Node& node, std::size_t input,
                                      std::size_t channels) {
  std::vector<std::int32_t> bias(channels, 0);
  if (const Tensor* b = constant_at(graph, node, input)) {
    const std::int32_t* data = b->data<std::int32_t>();
    std::copy(data, data + channels, bias.begin());
  }
  return bias;
}

// Defines the channel-wise filter and bias of a quantized convolution whose
// input has scale `input_scale`; both ids, or kInvalidId with the failure
// recorded.
std::pair<std::uint32_t, std::uint32_t> define_filter_and_bias(
    SubgraphBuilder& builder, const std::vector<std::int8_t>& filter, const Dims& dims,
    std::size_t channel_dim, const std::vector<float>& weight_scales,
    const std::vector<std::int32_t>& bias, float input_scale) {
  std::vector<float> bias_scales(weight_scales.size());
  for (std::size_t m = 0; m < bias_scales.size(); ++m) {
    bias_scales[m] = input_scale * weight_scales[m];
  }
  const std::uint32_t filter_id = builder.define_static_channelwise(
      filter.data(), filter.size(), dims, xnn_datatype_qcint8, weight_scales, channel_dim);
  const std::uint32_t bias_id =
      builder.define_static_channelwise(bias.data(), bias.size() * sizeof(std::int32_t),
                                        {bias.size()}, xnn_datatype_qcint32, bias_scales, 0);
  return {filter_id, bias_id};
}

// `node`'s input converted to float32 in `layout`, `define` (real_x,
// real_y) from it to a float32 result, converted to the output's
// quantization: for an op this XNNPACK has no int8 kernel for. Rounds once,
// at the last convert, as the definition does.
template <typename Define>
bool emit_through_float(SubgraphBuilder& builder, const Node& node, Layout layout, Define define) {
  const auto io = builder.bind_io(node, layout);
  if (!io) return false;
  const std::uint32_t real_x =
      builder.define_internal(xnn_dims(builder.shape(node.inputs[0]), layout));
  const std::uint32_t real_y =
      builder.define_internal(xnn_dims(builder.shape(node.outputs[0]), layout));
  if (real_x == kInvalidId || real_y == kInvalidId) return false;
  xnn_subgraph_t subgraph = builder.subgraph();
  return builder.check(xnn_define_convert(subgraph, io->x, real_x, 0), "convert") &&
         define(real_x, real_y) &&
         builder.check(xnn_define_convert(subgraph, real_y, io->y, 0), "convert");
}

// The layout an elementwise op runs in: its input's (SubgraphBuilder::bind_io).
Layout elementwise_layout(const SubgraphBuilder& builder, const Node& node) {
  return builder.follow_layout(node.inputs[0], node.outputs[0]);
}

}  // namespace

bool emit_qlinear_sigmoid(SubgraphBuilder& builder, const Node& node) {
  if (int8_sigmoid_writes(*builder.quantization(node.outputs[0]))) {
    return emit_sigmoid(builder, node);
  }
  return emit_through_float(
      builder, node, elementwise_layout(builder, node), [&](std::uint32_t x, std::uint32_t y) {
        return builder.check(xnn_define_sigmoid(builder.subgraph(), x, y, 0), "sigmoid");
      });
}

bool emit_qlinear_leaky_relu(SubgraphBuilder& builder, const Node& node) {
  const float alpha = node.attributes.get_float("alpha", 0.01f);
  return emit_through_float(
      builder, node, elementwise_layout(builder, node), [&](std::uint32_t x, std::uint32_t y) {
        return builder.check(xnn_define_leaky_relu(builder.subgraph(), alpha, x, y, 0),
                             "leaky relu");
      });
}

bool emit_qlinear_hard_swish(SubgraphBuilder& builder, const Node& node) {
  return emit_through_float(
      builder, node, elementwise_layout(builder, node), [&](std::uint32_t x, std::uint32_t y) {
        return builder.check(xnn_define_hardswish(builder.subgraph(), x, y, 0), "hardswish");
      });
}

bool emit_qlinear_hard_sigmoid(SubgraphBuilder& builder, const Node& node) {
  const Layout layout = elementwise_layout(builder, node);
  const Dims dims = xnn_dims(builder.shape(node.inputs[0]), layout);
  return emit_through_float(builder, node, layout, [&](std::uint32_t x, std::uint32_t y) {
    return define_hard_sigmoid(builder, node, x, y, dims);
  });
}

bool emit_qlinear_average_pool(SubgraphBuilder& builder, const Node& node) {
  const auto window = pool_window(builder.graph(), node);
  if (!window) return builder.fail("the pooling window does not match the output shape");
  return emit_through_float(builder, node, Layout::kChannelsLast,
                            [&](std::uint32_t x, std::uint32_t y) {
                              return define_average_pool(builder, node, *window, x, y);
                            });
}

bool emit_convert(SubgraphBuilder& builder, const Node& node) {
  const auto io = builder.bind_io(node);
  if (!io) return false;
  return builder.check(xnn_define_convert(builder.subgraph(), io->x, io->y, 0), "convert");
}

bool emit_qlinear_conv(SubgraphBuilder& builder, const Node& node) {
  const Graph& graph = builder.graph();
  auto window = conv_window(graph, node);
  if (!window) return builder.fail("the convolution window does not match the output shape");
  const Shape& w_shape = builder.shape(node.inputs[3]);
  const auto group = static_cast<std::size_t>(node.attributes.get_int("group", 1));
  const auto channels = static_cast<std::size_t>(builder.shape(node.inputs[0])[1]);
  const auto out_channels = static_cast<std::size_t>(w_shape[0]);
  const auto group_channels = static_cast<std::size_t>(w_shape[1]);
  const bool depthwise = group > 1 && group == channels && group_channels == 1;

  const std::vector<std::int8_t> filter = filter_in_xnnpack_order(
      graph.value(node.inputs[3]).constant->data<std::int8_t>(), w_shape, depthwise);
  const auto [filter_id, bias_id] = define_filter_and_bias(
      builder, filter, filter_dims(w_shape, depthwise), depthwise ? 3 : 0,
      weight_scales(graph, node, 4, out_channels), bias_values(graph, node, 8, out_channels),
      builder.quantization(node.inputs[0])->scale);
  if (filter_id == kInvalidId || bias_id == kInvalidId) return false;
  const auto io = builder.bind_io(node.inputs[0], node.outputs[0], Layout::kChannelsLast);
  if (!io) return false;
  return define_convolution(builder, *window, {group, channels, group_channels, out_channels},
                            depthwise, {io->x, filter_id, bias_id, io->y});
}

bool emit_qlinear_conv_transpose(SubgraphBuilder& builder, const Node& node) {
  const Graph& graph = builder.graph();
  auto window = conv_window(graph, node);
  if (!window) {
    return builder.fail("the transposed convolution window does not match the output shape");
  }
  const TransposeGeometry t = transpose_geometry(
      builder.shape(node.inputs[3]), static_cast<std::size_t>(node.attributes.get_int("group", 1)));
  const std::vector<std::int8_t> filter =
      conv_transpose_filter(graph.value(node.inputs[3]).constant->data<std::int8_t>(), t);
  const float weight_scale = weight_scales(graph, node, 4, 1)[0];
  const std::uint32_t filter_id = builder.define_static_quantized(
      std::vector<std::uint8_t>(filter.begin(), filter.end()),
      {t.out_channels, t.kh, t.kw, t.group_channels}, Quantization{.scale = weight_scale});
  const std::uint32_t bias_id =
      builder.define_static_int32(bias_values(graph, node, 8, t.out_channels), {t.out_channels},
                                  builder.quantization(node.inputs[0])->scale * weight_scale);
  if (filter_id == kInvalidId || bias_id == kInvalidId) return false;
  const auto io = builder.bind_io(node.inputs[0], node.outputs[0], Layout::kChannelsLast);
  if (!io) return false;
  return define_deconvolution(builder, *window, t, {io->x, filter_id, bias_id, io->y});
}

bool emit_qlinear_matmul(SubgraphBuilder& builder, const Node& node) {
  const Graph& graph = builder.graph();
  const Shape& a_shape = builder.shape(node.inputs[0]);
  const Shape& b_shape = builder.shape(node.inputs[3]);
  const bool gemm = node.op_type == "QGemm";
  const bool trans_b = gemm && node.attributes.get_int("transB", 0) != 0;
  const auto rows = static_cast<std::size_t>(a_shape[0]);
  const auto depth = static_cast<std::size_t>(a_shape[1]);
  const auto columns = static_cast<std::size_t>(trans_b ? b_shape[0] : b_shape[1]);
  // The filter is [N, 1, 1, K]: B's rows when transposed, its columns otherwise.
  const std::int8_t* b = graph.value(node.inputs[3]).constant->data<std::int8_t>();
  std::vector<std::int8_t> filter(columns * depth);
  for (std::size_t n = 0; n < columns; ++n) {
    for (std::size_t k = 0; k < depth; ++k) {
      filter[n * depth + k] = trans_b ? b[n * depth + k] : b[k * columns + n];
    }
  }
  const std::optional<Quantization>& a_quantization = builder.quantization(node.inputs[0]);
  const auto [filter_id, bias_id] = define_filter_and_bias(
      builder, filter, {columns, 1, 1, depth}, 0, weight_scales(graph, node, 4, columns),
      bias_values(graph, node, gemm ? 6 : node.inputs.size(), columns), a_quantization->scale);
  if (filter_id == kInvalidId || bias_id == kInvalidId) return false;
  // A's rows as the pixels of a [1, M, 1, K] image, and back.
  const std::uint32_t a = builder.use_in_logical_order(node.inputs[0]);
  if (a == kInvalidId) return false;
  const std::uint32_t image = builder.reshape(a, {1, rows, 1, depth});
  const std::optional<Quantization>& y_quantization = builder.quantization(node.outputs[0]);
  const std::uint32_t product = builder.define_internal({1, rows, 1, columns}, &*y_quantization);
  if (image == kInvalidId || product == kInvalidId) return false;
  if (!builder.check(
          xnn_define_convolution_2d(builder.subgraph(), 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, depth,
                                    columns, kNoMin, kNoMax, image, filter_id, bias_id, product, 0),
          "1x1 convolution")) {
    return false;
  }
  const std::uint32_t y = builder.define_output(node.outputs[0], Layout::kPlain);
  if (y == kInvalidId) return false;
  const Dims dims = {rows, columns};
  return builder.check(
      xnn_define_static_reshape(builder.subgraph(), dims.size(), dims.data(), product, y, 0),
      "reshape");
}

}  // namespace collage::xnnpack
