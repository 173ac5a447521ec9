// Activations: ops applied to one activation, element by element or (Softmax)
// along an axis.
#include <cstdint>
#include <utility>
#include <vector>

#include "collage/backends/xnnpack/emitters.h"
#include "collage/backends/xnnpack/op_support.h"

namespace collage::xnnpack {
namespace {

// xnn_define_abs, xnn_define_sigmoid, ...: y = f(x).
using UnaryDefine = xnn_status (*)(xnn_subgraph_t subgraph, std::uint32_t input_id,
                                   std::uint32_t output_id, std::uint32_t flags);

bool emit_one_op(SubgraphBuilder& builder, const Node& node, UnaryDefine define, const char* what) {
  const auto io = builder.bind_io(node);
  if (!io) return false;
  return builder.check(define(builder.subgraph(), io->x, io->y, 0), what);
}

// y = x * sigmoid(argument(x, dims)): Swish and the tanh form of Gelu.
template <typename Argument>
bool emit_x_times_sigmoid(SubgraphBuilder& builder, const Node& node, Argument argument) {
  const auto io = builder.bind_io(node);
  if (!io) return false;
  const Dims dims = xnn_dims(builder.shape(node.inputs[0]), io->layout);
  const std::uint32_t gate = builder.sigmoid(argument(io->x, dims), dims);
  if (gate == kInvalidId) return false;
  return builder.check(
      xnn_define_multiply2(builder.subgraph(), kNoMin, kNoMax, io->x, gate, io->y, 0), "multiply");
}

}  // namespace

bool emit_abs(SubgraphBuilder& builder, const Node& node) {
  return emit_one_op(builder, node, xnn_define_abs, "abs");
}

bool emit_ceil(SubgraphBuilder& builder, const Node& node) {
  return emit_one_op(builder, node, xnn_define_ceiling, "ceiling");
}

bool emit_floor(SubgraphBuilder& builder, const Node& node) {
  return emit_one_op(builder, node, xnn_define_floor, "floor");
}

bool emit_hard_swish(SubgraphBuilder& builder, const Node& node) {
  return emit_one_op(builder, node, xnn_define_hardswish, "hardswish");
}

bool emit_neg(SubgraphBuilder& builder, const Node& node) {
  return emit_one_op(builder, node, xnn_define_negate, "negate");
}

// ONNX rounds halves to even, as bankers' rounding does.
bool emit_round(SubgraphBuilder& builder, const Node& node) {
  return emit_one_op(builder, node, xnn_define_bankers_rounding, "bankers rounding");
}

bool emit_sigmoid(SubgraphBuilder& builder, const Node& node) {
  return emit_one_op(builder, node, xnn_define_sigmoid, "sigmoid");
}

bool emit_sqrt(SubgraphBuilder& builder, const Node& node) {
  return emit_one_op(builder, node, xnn_define_square_root, "square root");
}

bool emit_identity(SubgraphBuilder& builder, const Node& node) {
  const auto io = builder.bind_io(node);
  if (!io) return false;
  const Dims dims = xnn_dims(builder.shape(node.outputs[0]), io->layout);
  return builder.check(
      xnn_define_static_reshape(builder.subgraph(), dims.size(), dims.data(), io->x, io->y, 0),
      "identity");
}

bool emit_clamp(SubgraphBuilder& builder, const Node& node) {
  const auto io = builder.bind_io(node);
  if (!io) return false;
  auto bounds = clamp_bounds(builder.graph(), node);
  if (!bounds) return builder.fail("the clip bounds are not constant");
  return builder.check(
      xnn_define_clamp(builder.subgraph(), bounds->min, bounds->max, io->x, io->y, 0), "clamp");
}

bool emit_leaky_relu(SubgraphBuilder& builder, const Node& node) {
  const auto io = builder.bind_io(node);
  if (!io) return false;
  const float alpha = node.attributes.get_float("alpha", 0.01f);
  return builder.check(xnn_define_leaky_relu(builder.subgraph(), alpha, io->x, io->y, 0),
                       "leaky relu");
}

bool emit_elu(SubgraphBuilder& builder, const Node& node) {
  const auto io = builder.bind_io(node);
  if (!io) return false;
  const float alpha = node.attributes.get_float("alpha", 1.0f);
  return builder.check(xnn_define_elu(builder.subgraph(), alpha, io->x, io->y, 0), "elu");
}

bool emit_pow(SubgraphBuilder& builder, const Node& node) {
  const auto io = builder.bind_io(node);
  if (!io) return false;
  auto exponent = pow_exponent(builder.graph(), node);
  if (exponent == 2.0f) {
    return builder.check(xnn_define_square(builder.subgraph(), io->x, io->y, 0), "square");
  }
  if (exponent == 0.5f) {
    return builder.check(xnn_define_square_root(builder.subgraph(), io->x, io->y, 0),
                         "square root");
  }
  return builder.fail("the exponent is neither 2 nor 0.5");
}

bool define_hard_sigmoid(SubgraphBuilder& builder, const Node& node, std::uint32_t x,
                         std::uint32_t y, const Dims& dims) {
  // max(0, min(1, alpha * x + beta)): a multiply, then an add clamped to [0, 1].
  const Dims ones(dims.size(), 1);
  const std::uint32_t alpha =
      builder.define_static({node.attributes.get_float("alpha", 0.2f)}, ones);
  const std::uint32_t beta = builder.define_static({node.attributes.get_float("beta", 0.5f)}, ones);
  const std::uint32_t scaled = builder.binary(xnn_define_multiply2, "multiply", x, alpha, dims);
  if (beta == kInvalidId || scaled == kInvalidId) return false;
  return builder.check(xnn_define_add2(builder.subgraph(), 0.0f, 1.0f, scaled, beta, y, 0), "add");
}

bool emit_hard_sigmoid(SubgraphBuilder& builder, const Node& node) {
  const auto io = builder.bind_io(node);
  if (!io) return false;
  return define_hard_sigmoid(builder, node, io->x, io->y,
                             xnn_dims(builder.shape(node.inputs[0]), io->layout));
}

bool emit_swish(SubgraphBuilder& builder, const Node& node) {
  // x * sigmoid(alpha * x); alpha = 1 (SiLU) needs no scaling.
  const float alpha = node.attributes.get_float("alpha", 1.0f);
  return emit_x_times_sigmoid(builder, node, [&](std::uint32_t x, const Dims& dims) {
    if (alpha == 1.0f) return x;
    return builder.binary(xnn_define_multiply2, "multiply", x,
                          builder.define_scalar(alpha, dims.size()), dims);
  });
}

bool emit_gelu_tanh(SubgraphBuilder& builder, const Node& node) {
  // x / 2 * (1 + tanh(u)) = x * sigmoid(2u), u = sqrt(2 / pi) * (x + 0.044715 * x^3);
  // this XNNPACK has sigmoid but no tanh. 2u = x * (a + b * x^2).
  constexpr float kA = 1.5957691216057308f;  // 2 * sqrt(2 / pi)
  constexpr float kB = kA * 0.044715f;
  return emit_x_times_sigmoid(builder, node, [&](std::uint32_t x, const Dims& dims) {
    const std::uint32_t squared = builder.define_internal(dims);
    if (squared == kInvalidId ||
        !builder.check(xnn_define_square(builder.subgraph(), x, squared, 0), "square")) {
      return kInvalidId;
    }
    const std::uint32_t cubic = builder.binary(xnn_define_multiply2, "multiply", squared,
                                               builder.define_scalar(kB, dims.size()), dims);
    const std::uint32_t slope =
        builder.binary(xnn_define_add2, "add", cubic, builder.define_scalar(kA, dims.size()), dims);
    return builder.binary(xnn_define_multiply2, "multiply", x, slope, dims);
  });
}

bool emit_prelu(SubgraphBuilder& builder, const Node& node) {
  const Shape& x_shape = builder.shape(node.inputs[0]);
  const auto io =
      builder.bind_io(node, x_shape.size() == 4 ? Layout::kChannelsLast : Layout::kPlain);
  if (!io) return false;
  const std::int64_t channels = x_shape.size() == 4 ? x_shape[1] : x_shape.back();
  const Tensor& slope = *builder.graph().value(node.inputs[1]).constant;
  std::vector<float> slopes(static_cast<std::size_t>(channels));
  for (std::int64_t c = 0; c < channels; ++c) {
    slopes[static_cast<std::size_t>(c)] = slope.data<float>()[slope.numel() == 1 ? 0 : c];
  }
  const std::uint32_t slope_id =
      builder.define_static(std::move(slopes), {static_cast<std::size_t>(channels)});
  if (slope_id == kInvalidId) return false;
  return builder.check(xnn_define_prelu(builder.subgraph(), io->x, slope_id, io->y, 0), "prelu");
}

namespace {

// The layout a Softmax runs in: the plan's when its input's layout matters;
// else the input's own when XNNPACK's softmax computes ONNX's there, and the
// other one when not.
Layout softmax_layout(const SubgraphBuilder& builder, const Node& node) {
  const ValueId in = node.inputs[0];
  if (is_layout_constrained(builder.graph(), in)) return builder.plan().layout(in);
  if (builder.shape(in).size() != 4) return Layout::kPlain;
  const Layout layout = builder.stored_layout(in);
  if (softmax_runs_in(builder.graph(), node, layout)) return layout;
  return layout == Layout::kPlain ? Layout::kChannelsLast : Layout::kPlain;
}

}  // namespace

bool emit_softmax(SubgraphBuilder& builder, const Node& node) {
  const Layout layout = softmax_layout(builder, node);
  const auto io = builder.bind_io(node, layout);
  if (!io) return false;
  // The elements normalized together are the trailing `inner` ones of the
  // stored order: from the axis on (before opset 13), the axis alone (13 on,
  // whose later axes are all 1 in plain order), or C for channels-last.
  const Shape& x_shape = builder.shape(node.inputs[0]);
  const std::int64_t axis = softmax_axis(builder.graph(), node);
  const std::int64_t numel = shape_numel(x_shape);
  std::int64_t outer = 1;
  if (layout == Layout::kChannelsLast && builder.graph().opset >= 13) {
    outer = numel / x_shape[1];
  } else {
    for (std::int64_t d = 0; d < axis; ++d) outer *= x_shape[static_cast<std::size_t>(d)];
  }
  const std::int64_t inner = numel / outer;
  const Dims dims = xnn_dims(x_shape, layout);
  xnn_subgraph_t g = builder.subgraph();
  if (static_cast<std::int64_t>(dims.back()) == inner) {
    return builder.check(xnn_define_softmax(g, io->x, io->y, 0), "softmax");
  }
  const Dims flat = {static_cast<std::size_t>(outer), static_cast<std::size_t>(inner)};
  const std::uint32_t rows = builder.reshape(io->x, flat);
  const std::uint32_t normalized = builder.define_internal(flat);
  if (rows == kInvalidId || normalized == kInvalidId) return false;
  if (!builder.check(xnn_define_softmax(g, rows, normalized, 0), "softmax")) return false;
  return builder.check(xnn_define_static_reshape(g, dims.size(), dims.data(), normalized, io->y, 0),
                       "reshape");
}

}  // namespace collage::xnnpack
