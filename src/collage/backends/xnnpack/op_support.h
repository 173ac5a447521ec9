// Op support: which ONNX nodes the XNNPACK backend runs, and the XNNPACK
// parameters they decode to.
//
// The support checks must never claim a node XNNPACK gets wrong or refuses,
// so they decode every attribute and static shape exactly as the emitters
// do; both go through the decoders below. Each check is the `check` of rows
// of the op table (op_table.h), which is where an op type is paired with its
// check. The checks are node-local: a partition of supported nodes can still
// fail to compile when two nodes need the same value in different layouts
// (see LayoutPlan).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "collage/backends/xnnpack/channels_last.h"
#include "collage/backends/xnnpack/window_2d.h"
#include "collage/ir/graph.h"

namespace collage::xnnpack {

// The support checks: whether XNNPACK runs `node` of `graph` on its own, for
// a node whose op type the check's row lists. Every one requires float32
// values XNNPACK can hold and an input computed at run time (ops on
// constants only are left to constant folding).

// One input, one output of the same shape (Abs, Sigmoid, ...).
bool is_unary(const Graph& graph, const Node& node);
// Two inputs broadcasting (numpy rules) to the output (Add, Sub, Mul, Div).
bool is_binary(const Graph& graph, const Node& node);
// Two or more inputs broadcasting to the output (Max, Min, Sum).
bool is_broadcast(const Graph& graph, const Node& node);
bool is_leaky_relu(const Graph& graph, const Node& node);
bool is_elu(const Graph& graph, const Node& node);
// Relu, and Clip with constant bounds.
bool is_clamp(const Graph& graph, const Node& node);
bool is_hard_sigmoid(const Graph& graph, const Node& node);
bool is_swish(const Graph& graph, const Node& node);
bool is_gelu_tanh(const Graph& graph, const Node& node);
bool is_pow(const Graph& graph, const Node& node);
bool is_prelu(const Graph& graph, const Node& node);
bool is_softmax(const Graph& graph, const Node& node);
// Conv and ConvTranspose: 2-D, constant weights and bias.
bool is_conv(const Graph& graph, const Node& node);
// MaxPool and AveragePool.
bool is_pool(const Graph& graph, const Node& node);
bool is_global_pool(const Graph& graph, const Node& node);
bool is_gemm(const Graph& graph, const Node& node);
bool is_matmul(const Graph& graph, const Node& node);
bool is_batch_norm(const Graph& graph, const Node& node);
bool is_pad(const Graph& graph, const Node& node);
// Flatten, Reshape, Squeeze, Unsqueeze.
bool is_reshape(const Graph& graph, const Node& node);
bool is_depth_to_space(const Graph& graph, const Node& node);
bool is_resize(const Graph& graph, const Node& node);

// Relu and Clip: the clamp bounds (constant).
struct ClampBounds {
  float min;
  float max;
};
std::optional<ClampBounds> clamp_bounds(const Graph& graph, const Node& node);

// BatchNormalization (inference): y = scale * x + shift per channel. Kept in
// double so that folding it into a convolution's weights rounds once.
struct ChannelAffine {
  std::vector<double> scale;
  std::vector<double> shift;
};
ChannelAffine batch_norm_affine(const Graph& graph, const Node& node);

// Pad (mode "constant"): paddings per logical dimension and the fill value.
struct ConstantPad {
  std::vector<std::int64_t> pre;
  std::vector<std::int64_t> post;
  float value = 0.0f;
};
std::optional<ConstantPad> constant_pad(const Graph& graph, const Node& node);

// Softmax: the normalized axis, and whether XNNPACK's last-axis softmax
// computes ONNX's (opset-dependent) softmax for an input stored in `layout`.
std::int64_t softmax_axis(const Graph& graph, const Node& node);
bool softmax_runs_in(const Graph& graph, const Node& node, Layout layout);

// Conv and ConvTranspose: the resolved window (kernel from the weights).
std::optional<Window2d> conv_window(const Graph& graph, const Node& node);
// MaxPool and AveragePool: the resolved window, ceil_mode included.
std::optional<Window2d> pool_window(const Graph& graph, const Node& node);

// Resize (linear): the XNNPACK flags of its coordinate transformation mode.
std::optional<std::uint32_t> resize_flags(const Node& node);

// Pow with a constant exponent XNNPACK has an op for (2 -> square, 0.5 -> square root).
std::optional<float> pow_exponent(const Graph& graph, const Node& node);

// The data of a float32 constant.
const float* float_data(const Graph& graph, ValueId value);

// A constant holding exactly one float value (Clip bounds, Pad value, ...).
std::optional<float> constant_scalar(const Graph& graph, ValueId value);

}  // namespace collage::xnnpack
