// Emitters: how each op becomes XNNPACK subgraph nodes.
//
// One function per way of lowering an op, grouped by op family in
// emit_<family>.cc. Each is the `emit` of rows of the op table (op_table.h)
// and runs on a node that row's check accepted, reading the node's values
// through `builder` in the layouts of its LayoutPlan. It returns false, with
// the failure recorded in `builder`, when XNNPACK refuses a definition.
#pragma once

#include <cstddef>
#include <cstdint>

#include "collage/backends/xnnpack/filter_order.h"
#include "collage/backends/xnnpack/subgraph_builder.h"
#include "collage/ir/graph.h"

namespace collage::xnnpack {

// A window parameter (Window2d) as XNNPACK's definitions take it.
inline std::uint32_t u32(std::int64_t v) { return static_cast<std::uint32_t>(v); }

// emit_activation.cc: ops applied to one activation, element by element or
// (Softmax) along an axis.

// One XNNPACK op of the same meaning each.
bool emit_abs(SubgraphBuilder& builder, const Node& node);
bool emit_ceil(SubgraphBuilder& builder, const Node& node);
bool emit_floor(SubgraphBuilder& builder, const Node& node);
bool emit_hard_swish(SubgraphBuilder& builder, const Node& node);
bool emit_neg(SubgraphBuilder& builder, const Node& node);
bool emit_round(SubgraphBuilder& builder, const Node& node);
bool emit_sigmoid(SubgraphBuilder& builder, const Node& node);
bool emit_sqrt(SubgraphBuilder& builder, const Node& node);
// A reshape to the same dims.
bool emit_identity(SubgraphBuilder& builder, const Node& node);
// Relu and Clip.
bool emit_clamp(SubgraphBuilder& builder, const Node& node);
bool emit_leaky_relu(SubgraphBuilder& builder, const Node& node);
bool emit_elu(SubgraphBuilder& builder, const Node& node);
// A square or a square root.
bool emit_pow(SubgraphBuilder& builder, const Node& node);
// A multiply, then an add clamped to [0, 1].
bool emit_hard_sigmoid(SubgraphBuilder& builder, const Node& node);
// Those two from float32 value x to float32 value y of `dims`, with `node`'s
// alpha and beta (HardSigmoid's, or QLinearHardSigmoid's).
bool define_hard_sigmoid(SubgraphBuilder& builder, const Node& node, std::uint32_t x,
                         std::uint32_t y, const Dims& dims);
// x * sigmoid(alpha * x).
bool emit_swish(SubgraphBuilder& builder, const Node& node);
// x * sigmoid(2u), u the argument of tanh in the tanh form.
bool emit_gelu_tanh(SubgraphBuilder& builder, const Node& node);
bool emit_prelu(SubgraphBuilder& builder, const Node& node);
// XNNPACK's softmax over the innermost dimension, reshaped to it when the
// normalized axes span more than one stored dimension.
bool emit_softmax(SubgraphBuilder& builder, const Node& node);

// emit_arithmetic.cc: broadcasting binary ops, chained over the inputs of
// the variadic ones (Sum, Max, Min), and BatchNormalization as a multiply
// and an add.
bool emit_add(SubgraphBuilder& builder, const Node& node);
bool emit_sub(SubgraphBuilder& builder, const Node& node);
bool emit_mul(SubgraphBuilder& builder, const Node& node);
bool emit_div(SubgraphBuilder& builder, const Node& node);
bool emit_max(SubgraphBuilder& builder, const Node& node);
bool emit_min(SubgraphBuilder& builder, const Node& node);
bool emit_batch_norm(SubgraphBuilder& builder, const Node& node);
// com.microsoft QLinearAdd and QLinearMul on qint8 values.
bool emit_qlinear_add(SubgraphBuilder& builder, const Node& node);
bool emit_qlinear_mul(SubgraphBuilder& builder, const Node& node);

// emit_quantized.cc: quantized ops on qint8 values (quantized.h).

// QuantizeLinear and DequantizeLinear: XNNPACK's convert.
bool emit_convert(SubgraphBuilder& builder, const Node& node);
// QLinearConv with channel-wise int8 weights; depthwise as Conv is.
bool emit_qlinear_conv(SubgraphBuilder& builder, const Node& node);
// collage's QLinearConvTranspose: this XNNPACK's int8 deconvolution (one
// weight scale).
bool emit_qlinear_conv_transpose(SubgraphBuilder& builder, const Node& node);
// QGemm and QLinearMatMul as a 1x1 convolution over the rows of A (this
// XNNPACK's fully connected node takes no channel-wise weights).
bool emit_qlinear_matmul(SubgraphBuilder& builder, const Node& node);
// QLinearSigmoid: this XNNPACK's int8 sigmoid where it writes the output's
// scale, else a float32 sigmoid between converts; QLinearLeakyRelu, which
// has no int8 kernel here, always the latter.
bool emit_qlinear_sigmoid(SubgraphBuilder& builder, const Node& node);
bool emit_qlinear_leaky_relu(SubgraphBuilder& builder, const Node& node);
// collage's QLinearHardSwish and QLinearHardSigmoid: the float32 op between
// converts (no int8 kernel here).
bool emit_qlinear_hard_swish(SubgraphBuilder& builder, const Node& node);
bool emit_qlinear_hard_sigmoid(SubgraphBuilder& builder, const Node& node);
// QLinearAveragePool: float32 average pooling between converts (this XNNPACK
// has no int8 average pooling).
bool emit_qlinear_average_pool(SubgraphBuilder& builder, const Node& node);

// emit_convolution.cc: Conv (a following BatchNormalization folded in;
// depthwise when it has one input channel per group) and ConvTranspose.

// A convolution's channel counts: input channels, per group, output.
struct ConvChannels {
  std::size_t group, channels, group_channels, out_channels;
};
// A convolution's XNNPACK values: input, filter, bias, output.
struct ConvValues {
  std::uint32_t x, filter, bias, y;
};
// Defines a 2-D convolution over channels-last values (float or quantized,
// as its values are), depthwise when `depthwise` (filter [1, kH, kW, M]).
bool define_convolution(SubgraphBuilder& builder, const Window2d& window, const ConvChannels& c,
                        bool depthwise, const ConvValues& values);
// Defines a 2-D deconvolution (a ConvTranspose) over channels-last values,
// float or quantized as its values are; filter [M, kH, kW, C/group].
bool define_deconvolution(SubgraphBuilder& builder, const Window2d& window,
                          const TransposeGeometry& geometry, const ConvValues& values);
bool emit_conv(SubgraphBuilder& builder, const Node& node);
bool emit_conv_transpose(SubgraphBuilder& builder, const Node& node);

// emit_pooling.cc.
bool emit_max_pool(SubgraphBuilder& builder, const Node& node);
bool emit_average_pool(SubgraphBuilder& builder, const Node& node);
// The float32 average pooling of `node` (AveragePool or QLinearAveragePool:
// its window `w`, count_include_pad) from channels-last `x` into `y`.
bool define_average_pool(SubgraphBuilder& builder, const Node& node, Window2d w, std::uint32_t x,
                         std::uint32_t y);
bool emit_global_max_pool(SubgraphBuilder& builder, const Node& node);
bool emit_global_average_pool(SubgraphBuilder& builder, const Node& node);

// emit_fully_connected.cc: Gemm, and MatMul with a following bias Add folded in.
bool emit_gemm(SubgraphBuilder& builder, const Node& node);
bool emit_matmul(SubgraphBuilder& builder, const Node& node);

// emit_data_movement.cc: ops that move or resample data.

// Flatten, Reshape, Squeeze and Unsqueeze: the input in logical order, given
// the output's dims.
bool emit_reshape(SubgraphBuilder& builder, const Node& node);
bool emit_pad(SubgraphBuilder& builder, const Node& node);
bool emit_depth_to_space(SubgraphBuilder& builder, const Node& node);
bool emit_resize(SubgraphBuilder& builder, const Node& node);

}  // namespace collage::xnnpack
