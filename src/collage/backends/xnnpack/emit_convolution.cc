// Convolution: Conv (with a following BatchNormalization folded in) and
// ConvTranspose, over channels-last values.
#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "collage/backends/xnnpack/emitters.h"
#include "collage/backends/xnnpack/filter_order.h"
#include "collage/backends/xnnpack/op_support.h"

namespace collage::xnnpack {
namespace {

// A Conv's weights as XNNPACK's filter (filter_order.h), each output
// channel scaled by `scale` (a folded BatchNormalization).
struct ConvFilter {
  std::vector<float> data;
  Dims dims;
};

ConvFilter conv_filter(const float* weights, const Shape& w_shape, const std::vector<double>& scale,
                       bool depthwise) {
  ConvFilter filter{filter_in_xnnpack_order(weights, w_shape, depthwise),
                    filter_dims(w_shape, depthwise)};
  const std::size_t out_channels = scale.size();
  for (std::size_t k = 0; k < filter.data.size(); ++k) {
    // The output channel is outermost in OHWI and innermost in [1, kH, kW, M].
    const std::size_t m = depthwise ? k % out_channels : k / (filter.data.size() / out_channels);
    filter.data[k] = static_cast<float>(filter.data[k] * scale[m]);
  }
  return filter;
}

}  // namespace

bool define_convolution(SubgraphBuilder& builder, const Window2d& w, const ConvChannels& c,
                        bool depthwise, const ConvValues& v) {
  if (depthwise) {
    return builder.check(xnn_define_depthwise_convolution_2d(
                             builder.subgraph(), u32(w.pad_top), u32(w.pad_right),
                             u32(w.pad_bottom), u32(w.pad_left), u32(w.kernel_h), u32(w.kernel_w),
                             u32(w.stride_h), u32(w.stride_w), u32(w.dilation_h), u32(w.dilation_w),
                             static_cast<std::uint32_t>(c.out_channels / c.channels), c.channels,
                             kNoMin, kNoMax, v.x, v.filter, v.bias, v.y, 0),
                         "depthwise convolution");
  }
  return builder.check(
      xnn_define_convolution_2d(
          builder.subgraph(), u32(w.pad_top), u32(w.pad_right), u32(w.pad_bottom), u32(w.pad_left),
          u32(w.kernel_h), u32(w.kernel_w), u32(w.stride_h), u32(w.stride_w), u32(w.dilation_h),
          u32(w.dilation_w), static_cast<std::uint32_t>(c.group), c.group_channels,
          c.out_channels / c.group, kNoMin, kNoMax, v.x, v.filter, v.bias, v.y, 0),
      "convolution");
}

bool emit_conv(SubgraphBuilder& builder, const Node& node) {
  auto window = conv_window(builder.graph(), node);
  if (!window) return builder.fail("the convolution window does not match the output shape");
  const Shape& w_shape = builder.shape(node.inputs[1]);
  const auto group = static_cast<std::size_t>(node.attributes.get_int("group", 1));
  const auto channels = static_cast<std::size_t>(builder.shape(node.inputs[0])[1]);
  const auto out_channels = static_cast<std::size_t>(w_shape[0]);
  const auto group_channels = static_cast<std::size_t>(w_shape[1]);

  // An inference BatchNormalization after the convolution scales each output
  // channel and shifts it: fold both into the weights and the bias.
  ValueId out = node.outputs[0];
  ChannelAffine affine{std::vector<double>(out_channels, 1.0),
                       std::vector<double>(out_channels, 0.0)};
  if (const Node* bn = builder.folded_node()) {
    affine = batch_norm_affine(builder.graph(), *bn);
    out = bn->outputs[0];
  }
  const float* bias =
      node.input(2) == kNoValue ? nullptr : float_data(builder.graph(), node.inputs[2]);
  std::vector<float> folded_bias(out_channels);
  for (std::size_t m = 0; m < out_channels; ++m) {
    folded_bias[m] = static_cast<float>((bias ? bias[m] : 0.0) * affine.scale[m] + affine.shift[m]);
  }
  // One input channel per group and as many groups as channels: a depthwise convolution.
  const bool depthwise = group > 1 && group == channels && group_channels == 1;
  ConvFilter filter =
      conv_filter(float_data(builder.graph(), node.inputs[1]), w_shape, affine.scale, depthwise);

  const auto io = builder.bind_io(node.inputs[0], out, Layout::kChannelsLast);
  if (!io) return false;
  const std::uint32_t filter_id = builder.define_static(std::move(filter.data), filter.dims);
  const std::uint32_t bias_id = builder.define_static(std::move(folded_bias), {out_channels});
  if (filter_id == kInvalidId || bias_id == kInvalidId) return false;
  return define_convolution(builder, *window, {group, channels, group_channels, out_channels},
                            depthwise, {io->x, filter_id, bias_id, io->y});
}

bool emit_conv_transpose(SubgraphBuilder& builder, const Node& node) {
  auto window = conv_window(builder.graph(), node);
  if (!window) {
    return builder.fail("the transposed convolution window does not match the output shape");
  }
  const TransposeGeometry t = transpose_geometry(
      builder.shape(node.inputs[1]), static_cast<std::size_t>(node.attributes.get_int("group", 1)));
  std::vector<float> filter = conv_transpose_filter(float_data(builder.graph(), node.inputs[1]), t);
  std::vector<float> bias(t.out_channels, 0.0f);
  if (node.input(2) != kNoValue) {
    const float* b = float_data(builder.graph(), node.inputs[2]);
    std::copy(b, b + t.out_channels, bias.begin());
  }
  const auto io = builder.bind_io(node, Layout::kChannelsLast);
  if (!io) return false;
  const std::uint32_t filter_id =
      builder.define_static(std::move(filter), {t.out_channels, t.kh, t.kw, t.group_channels});
  const std::uint32_t bias_id = builder.define_static(std::move(bias), {t.out_channels});
  if (filter_id == kInvalidId || bias_id == kInvalidId) return false;
  return define_deconvolution(builder, *window, t, {io->x, filter_id, bias_id, io->y});
}

bool define_deconvolution(SubgraphBuilder& builder, const Window2d& w, const TransposeGeometry& t,
                          const ConvValues& v) {
  return builder.check(
      xnn_define_deconvolution_2d(
          builder.subgraph(), u32(w.pad_top), u32(w.pad_right), u32(w.pad_bottom), u32(w.pad_left),
          u32(w.adjustment_h), u32(w.adjustment_w), u32(w.kernel_h), u32(w.kernel_w),
          u32(w.stride_h), u32(w.stride_w), u32(w.dilation_h), u32(w.dilation_w),
          static_cast<std::uint32_t>(t.group), t.group_channels, t.group_out_channels, kNoMin,
          kNoMax, v.x, v.filter, v.bias, v.y, 0),
      "deconvolution");
}

}  // namespace collage::xnnpack
