// Op support: which ONNX nodes the XNNPACK backend runs, and the XNNPACK
// parameters they decode to.
//
// The support predicate must never claim a node XNNPACK gets wrong or
// refuses, so it decodes every attribute and static shape exactly as the
// subgraph builder does; both go through the decoders below. The checks are
// node-local: a partition of supported nodes can still fail to compile when
// two nodes need the same value in different layouts (see LayoutPlan).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "collage/backends/xnnpack/channels_last.h"
#include "collage/backends/xnnpack/window_2d.h"
#include "collage/ir/graph.h"

namespace collage::xnnpack {

// One table row per op type (op_support.cc) carries its support check, its
// layout rule and its emitter, so an op is added in one place.

// Whether the XNNPACK backend can run `node` of `graph` as a partition of its own.
bool supports_node(const Graph& graph, const Node& node);

// The op types supports_node can accept, sorted, each with its conditions:
// "Abs, Add, ..., Conv (2-D, constant weights; ...), ...".
std::string describe_ops();

// How an op constrains the layouts of its 4-D values (see LayoutPlan).
enum class LayoutRule {
  // Input 0 and output 0 share a layout, whichever it is (elementwise ops, Pad).
  kFollowInput,
  // Every input of the output's rank shares the output's layout; lower-rank
  // inputs are broadcast into it (Add, Mul, Max, ...).
  kBroadcast,
  // Input 0 and output 0 must be channels-last (convolution, pooling).
  kChannelsLast,
  // Input 0 and output 0 must be plain (reshapes, fully connected).
  kPlain,
  // Shared layout, restricted to those where the axis maps onto XNNPACK's.
  kSoftmax,
  // Channels-last when 4-D (the slope is per channel), plain otherwise.
  kPrelu,
};
LayoutRule layout_rule(const Node& node);

// Which of the subgraph builder's emitters lowers an op (one per way of
// defining XNNPACK nodes; several ops share one).
enum class Emitter {
  kUnary,
  kHardSigmoid,
  kSwish,
  kGeluTanh,
  kBroadcast,
  kBatchNorm,
  kPrelu,
  kSoftmax,
  kPad,
  kReshape,
  kConv,
  kConvTranspose,
  kPool,
  kGlobalPool,
  kDepthToSpace,
  kResize,
  kGemm,
  kMatMul,
};
// The emitter of a node supports_node accepts.
Emitter emitter(const Node& node);

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

// A constant holding exactly one float value (Clip bounds, Pad value, ...).
std::optional<float> constant_scalar(const Graph& graph, ValueId value);

}  // namespace collage::xnnpack
