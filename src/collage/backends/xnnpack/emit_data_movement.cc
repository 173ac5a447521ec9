// Data movement: the reshape family, Pad, DepthToSpace and Resize.
#include <cstdint>

#include "collage/backends/xnnpack/emitters.h"
#include "collage/backends/xnnpack/op_support.h"

namespace collage::xnnpack {

bool emit_reshape(SubgraphBuilder& builder, const Node& node) {
  const std::uint32_t x = builder.use_in_logical_order(node.inputs[0]);
  if (x == kInvalidId) return false;
  const ValueId out = node.outputs[0];
  const std::uint32_t y = builder.define_output(out, Layout::kPlain);
  if (y == kInvalidId) return false;
  const Dims dims = xnn_dims(builder.shape(out), Layout::kPlain);
  return builder.check(
      xnn_define_static_reshape(builder.subgraph(), dims.size(), dims.data(), x, y, 0), "reshape");
}

bool emit_pad(SubgraphBuilder& builder, const Node& node) {
  auto pad = constant_pad(builder.graph(), node);
  if (!pad) return builder.fail("the paddings are not constant and non-negative");
  const auto io = builder.bind_io(node);
  if (!io) return false;
  Dims pre(pad->pre.begin(), pad->pre.end());
  Dims post(pad->post.begin(), pad->post.end());
  if (io->layout == Layout::kChannelsLast && pre.size() == 4) {
    pre = {pre[0], pre[2], pre[3], pre[1]};
    post = {post[0], post[2], post[3], post[1]};
  }
  if (pre.empty()) {
    pre = {0};
    post = {0};
  }
  return builder.check(xnn_define_static_constant_pad(builder.subgraph(), pre.data(), post.data(),
                                                      pad->value, io->x, io->y, 0),
                       "constant pad");
}

bool emit_depth_to_space(SubgraphBuilder& builder, const Node& node) {
  const auto io = builder.bind_io(node, Layout::kChannelsLast);
  if (!io) return false;
  const auto block = static_cast<std::uint32_t>(node.attributes.get_int("blocksize"));
  return builder.check(xnn_define_depth_to_space(builder.subgraph(), io->x, io->y, block, 0),
                       "depth to space");
}

bool emit_resize(SubgraphBuilder& builder, const Node& node) {
  auto flags = resize_flags(node);
  if (!flags) return builder.fail("the coordinate transformation mode is not supported");
  const auto io = builder.bind_io(node, Layout::kChannelsLast);
  if (!io) return false;
  const Shape& y_shape = builder.shape(node.outputs[0]);
  return builder.check(xnn_define_static_resize_bilinear_2d(
                           builder.subgraph(), static_cast<std::size_t>(y_shape[2]),
                           static_cast<std::size_t>(y_shape[3]), io->x, io->y, *flags),
                       "bilinear resize");
}

}  // namespace collage::xnnpack
