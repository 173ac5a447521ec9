// Arithmetic: broadcasting binary ops and inference BatchNormalization.
#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "collage/backends/xnnpack/emitters.h"
#include "collage/backends/xnnpack/op_support.h"

namespace collage::xnnpack {
namespace {

// xnn_define_maximum2 and xnn_define_minimum2 take no output bounds; as
// BinaryDefines they ignore the (unbounded) ones they are given.
xnn_status define_maximum(xnn_subgraph_t subgraph, float, float, std::uint32_t a, std::uint32_t b,
                          std::uint32_t out, std::uint32_t flags) {
  return xnn_define_maximum2(subgraph, a, b, out, flags);
}

xnn_status define_minimum(xnn_subgraph_t subgraph, float, float, std::uint32_t a, std::uint32_t b,
                          std::uint32_t out, std::uint32_t flags) {
  return xnn_define_minimum2(subgraph, a, b, out, flags);
}

Shape broadcast_shapes(const Shape& a, const Shape& b) {
  Shape result(a.size());
  for (std::size_t d = 0; d < a.size(); ++d) result[d] = std::max(a[d], b[d]);
  return result;
}

// The layout a broadcasting op runs in: the plan's when its output's layout
// matters; for a layout-free 4-D output, that of a 4-D activation input, so
// that it needs no reshape.
Layout broadcast_layout(const SubgraphBuilder& builder, const Node& node) {
  const ValueId out = node.outputs[0];
  if (is_layout_constrained(builder.graph(), out)) return builder.plan().layout(out);
  if (builder.shape(out).size() != 4) return Layout::kPlain;
  for (ValueId input : node.inputs) {
    if (builder.graph().value(input).is_constant() || builder.shape(input).size() != 4) continue;
    return builder.stored_layout(input);
  }
  return Layout::kPlain;
}

// Operands 0 and 1 combined by `define`, the result and each further operand
// combined again (Sum, Max, Min take any number of inputs). The operands are
// the node's inputs, or for the quantized ops the inputs holding values.
bool emit_broadcast(SubgraphBuilder& builder, const Node& node, BinaryDefine define,
                    const std::vector<ValueId>& operands) {
  const ValueId out = node.outputs[0];
  const Shape& out_shape = builder.shape(out);
  const Layout layout = broadcast_layout(builder, node);
  const int rank = static_cast<int>(out_shape.size());
  std::uint32_t accumulated = builder.broadcast_operand(operands[0], out_shape, layout);
  if (accumulated == kInvalidId) return false;
  Shape accumulated_shape = pad_to_rank(builder.shape(operands[0]), rank);
  for (std::size_t i = 1; i < operands.size(); ++i) {
    const std::uint32_t operand = builder.broadcast_operand(operands[i], out_shape, layout);
    if (operand == kInvalidId) return false;
    accumulated_shape =
        broadcast_shapes(accumulated_shape, pad_to_rank(builder.shape(operands[i]), rank));
    const bool last = i + 1 == operands.size();
    const std::uint32_t y = last ? builder.define_output(out, layout)
                                 : builder.define_internal(xnn_dims(accumulated_shape, layout));
    if (y == kInvalidId) return false;
    if (!builder.check(define(builder.subgraph(), kNoMin, kNoMax, accumulated, operand, y, 0),
                       "binary op")) {
      return false;
    }
    accumulated = y;
  }
  return true;
}

}  // namespace

bool emit_add(SubgraphBuilder& builder, const Node& node) {
  return emit_broadcast(builder, node, xnn_define_add2, node.inputs);
}

bool emit_sub(SubgraphBuilder& builder, const Node& node) {
  return emit_broadcast(builder, node, xnn_define_subtract, node.inputs);
}

bool emit_mul(SubgraphBuilder& builder, const Node& node) {
  return emit_broadcast(builder, node, xnn_define_multiply2, node.inputs);
}

bool emit_div(SubgraphBuilder& builder, const Node& node) {
  return emit_broadcast(builder, node, xnn_define_divide, node.inputs);
}

bool emit_max(SubgraphBuilder& builder, const Node& node) {
  return emit_broadcast(builder, node, define_maximum, node.inputs);
}

bool emit_min(SubgraphBuilder& builder, const Node& node) {
  return emit_broadcast(builder, node, define_minimum, node.inputs);
}

// QLinearAdd and QLinearMul: values at inputs 0 and 3, requantized by
// XNNPACK to the output's scale and zero point.
bool emit_qlinear_add(SubgraphBuilder& builder, const Node& node) {
  return emit_broadcast(builder, node, xnn_define_add2, {node.inputs[0], node.inputs[3]});
}

bool emit_qlinear_mul(SubgraphBuilder& builder, const Node& node) {
  return emit_broadcast(builder, node, xnn_define_multiply2, {node.inputs[0], node.inputs[3]});
}

bool emit_batch_norm(SubgraphBuilder& builder, const Node& node) {
  const auto io = builder.bind_io(node);
  if (!io) return false;
  const ChannelAffine affine = batch_norm_affine(builder.graph(), node);
  std::vector<float> scale(affine.scale.begin(), affine.scale.end());
  std::vector<float> shift(affine.shift.begin(), affine.shift.end());
  // Per-channel constants shaped to broadcast along the channel axis.
  const Dims dims = xnn_dims(builder.shape(node.inputs[0]), io->layout);
  Dims channel_dims(dims.size(), 1);
  channel_dims[io->layout == Layout::kChannelsLast && dims.size() == 4 ? 3 : 1] = scale.size();
  const std::uint32_t scale_id = builder.define_static(std::move(scale), channel_dims);
  const std::uint32_t shift_id = builder.define_static(std::move(shift), channel_dims);
  const std::uint32_t scaled =
      builder.binary(xnn_define_multiply2, "multiply", io->x, scale_id, dims);
  if (shift_id == kInvalidId || scaled == kInvalidId) return false;
  return builder.check(
      xnn_define_add2(builder.subgraph(), kNoMin, kNoMax, scaled, shift_id, io->y, 0), "add");
}

}  // namespace collage::xnnpack
