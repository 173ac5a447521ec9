// Pooling: MaxPool, AveragePool and the global pools, over channels-last
// values.
#include <cstdint>
#include <limits>
#include <optional>
#include <utility>

#include "collage/backends/xnnpack/emitters.h"
#include "collage/backends/xnnpack/op_support.h"

namespace collage::xnnpack {
namespace {

// A pool's window, and its input and output bound in channels-last; none
// (the failure recorded in `builder`) when either does not fit.
std::optional<std::pair<Window2d, SubgraphBuilder::Io>> pool_io(SubgraphBuilder& builder,
                                                                const Node& node) {
  auto window = pool_window(builder.graph(), node);
  if (!window) {
    builder.fail("the pooling window does not match the output shape");
    return std::nullopt;
  }
  const auto io = builder.bind_io(node, Layout::kChannelsLast);
  if (!io) return std::nullopt;
  return std::pair{*window, *io};
}

}  // namespace

bool emit_max_pool(SubgraphBuilder& builder, const Node& node) {
  auto pooled = pool_io(builder, node);
  if (!pooled) return false;
  auto& [w, io] = *pooled;
  std::uint32_t x = io.x;
  // This XNNPACK takes the wrong elements when a dilated window overlaps
  // padding; padding with -inf first leaves it windows inside its input.
  const bool dilated = w.dilation_h > 1 || w.dilation_w > 1;
  if (dilated && w.has_padding()) {
    x = builder.pad_channels_last(x, builder.shape(node.inputs[0]), w,
                                  -std::numeric_limits<float>::infinity(), w.pad_bottom,
                                  w.pad_right);
    if (x == kInvalidId) return false;
    w.pad_top = w.pad_left = w.pad_bottom = w.pad_right = 0;
  }
  return builder.check(
      xnn_define_max_pooling_2d(builder.subgraph(), u32(w.pad_top), u32(w.pad_right),
                                u32(w.pad_bottom), u32(w.pad_left), u32(w.kernel_h),
                                u32(w.kernel_w), u32(w.stride_h), u32(w.stride_w),
                                u32(w.dilation_h), u32(w.dilation_w), kNoMin, kNoMax, x, io.y, 0),
      "max pooling");
}

bool emit_average_pool(SubgraphBuilder& builder, const Node& node) {
  auto pooled = pool_io(builder, node);
  if (!pooled) return false;
  auto& [w, io] = *pooled;
  return define_average_pool(builder, node, w, io.x, io.y);
}

bool define_average_pool(SubgraphBuilder& builder, const Node& node, Window2d w, std::uint32_t x,
                         std::uint32_t y) {
  // XNNPACK's average leaves padding out of the count. For count_include_pad,
  // the node's own pads become zeros that count; ceil_mode's extra end
  // padding still does not count, as in ONNX Runtime and PyTorch.
  const std::int64_t own_bottom = w.pad_bottom - w.ceil_extra_bottom;
  const std::int64_t own_right = w.pad_right - w.ceil_extra_right;
  const bool counts_pads = node.attributes.get_int("count_include_pad", 0) != 0;
  if (counts_pads && w.pad_top + w.pad_left + own_bottom + own_right > 0) {
    x = builder.pad_channels_last(x, builder.shape(node.inputs[0]), w, 0.0f, own_bottom, own_right);
    if (x == kInvalidId) return false;
    w.pad_top = w.pad_left = 0;
    w.pad_bottom = w.ceil_extra_bottom;
    w.pad_right = w.ceil_extra_right;
  }
  return builder.check(xnn_define_average_pooling_2d(
                           builder.subgraph(), u32(w.pad_top), u32(w.pad_right), u32(w.pad_bottom),
                           u32(w.pad_left), u32(w.kernel_h), u32(w.kernel_w), u32(w.stride_h),
                           u32(w.stride_w), kNoMin, kNoMax, x, y, 0),
                       "average pooling");
}

bool emit_global_max_pool(SubgraphBuilder& builder, const Node& node) {
  const auto io = builder.bind_io(node, Layout::kChannelsLast);
  if (!io) return false;
  const Shape& x_shape = builder.shape(node.inputs[0]);
  const auto height = static_cast<std::uint32_t>(x_shape[2]);
  const auto width = static_cast<std::uint32_t>(x_shape[3]);
  // XNNPACK has no 1x1 pooling; the maximum of one element is the element.
  if (height * width == 1) {
    const Dims dims = xnn_dims(builder.shape(node.outputs[0]), Layout::kChannelsLast);
    return builder.check(
        xnn_define_static_reshape(builder.subgraph(), dims.size(), dims.data(), io->x, io->y, 0),
        "reshape");
  }
  return builder.check(xnn_define_max_pooling_2d(builder.subgraph(), 0, 0, 0, 0, height, width, 1,
                                                 1, 1, 1, kNoMin, kNoMax, io->x, io->y, 0),
                       "global max pooling");
}

bool emit_global_average_pool(SubgraphBuilder& builder, const Node& node) {
  const auto io = builder.bind_io(node, Layout::kChannelsLast);
  if (!io) return false;
  return builder.check(
      xnn_define_global_average_pooling_2d(builder.subgraph(), kNoMin, kNoMax, io->x, io->y, 0),
      "global average pooling");
}

}  // namespace collage::xnnpack
