#include "collage/backends/xnnpack/op_support.h"

#include <xnnpack.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "collage/backends/xnnpack/quantized.h"

namespace collage::xnnpack {
namespace {

// A float32 tensor XNNPACK can hold: rank within XNN_MAX_TENSOR_DIMS, not empty.
bool is_float_tensor(const Graph& graph, ValueId value) {
  if (value == kNoValue) return false;
  const TensorType& type = graph.type(value);
  return type.dtype == DType::kFloat32 && type.rank() <= XNN_MAX_TENSOR_DIMS && type.numel() > 0;
}

// A float input computed at run time. Ops on constants only are left to
// constant folding, so every supported node has one.
bool is_activation(const Graph& graph, ValueId value) {
  return is_float_tensor(graph, value) && !graph.value(value).is_constant();
}

bool is_float_constant(const Graph& graph, ValueId value) {
  return is_float_tensor(graph, value) && graph.value(value).is_constant();
}

bool has_one_float_output(const Graph& graph, const Node& node) {
  return node.outputs.size() == 1 && is_float_tensor(graph, node.outputs[0]);
}

const Shape& shape_of(const Graph& graph, ValueId value) { return graph.type(value).shape; }

bool present(const Node& node, std::size_t i) { return node.input(i) != kNoValue; }

}  // namespace

// One activation in, one float output of the same shape.
bool is_unary(const Graph& graph, const Node& node) {
  return node.inputs.size() == 1 && is_activation(graph, node.inputs[0]) &&
         has_one_float_output(graph, node) &&
         shape_of(graph, node.outputs[0]) == shape_of(graph, node.inputs[0]);
}

// Every input broadcasts (numpy rules) to the output shape and at least one is an activation.
bool is_broadcast(const Graph& graph, const Node& node) {
  if (node.inputs.size() < 2 || !has_one_float_output(graph, node)) return false;
  const Shape& out = shape_of(graph, node.outputs[0]);
  bool any_activation = false;
  for (ValueId input : node.inputs) {
    if (!is_float_tensor(graph, input)) return false;
    any_activation |= !graph.value(input).is_constant();
    const Shape& shape = shape_of(graph, input);
    if (shape.size() > out.size()) return false;
    Shape padded = pad_to_rank(shape, static_cast<int>(out.size()));
    for (std::size_t d = 0; d < out.size(); ++d) {
      if (padded[d] != out[d] && padded[d] != 1) return false;
    }
  }
  return any_activation;
}

bool is_binary(const Graph& graph, const Node& node) {
  return node.inputs.size() == 2 && is_broadcast(graph, node);
}

bool is_leaky_relu(const Graph& graph, const Node& node) {
  return is_unary(graph, node) && std::isfinite(node.attributes.get_float("alpha", 0.01f));
}

// XNNPACK's ELU takes a positive, normal alpha only.
bool is_elu(const Graph& graph, const Node& node) {
  const float alpha = node.attributes.get_float("alpha", 1.0f);
  return is_unary(graph, node) && alpha > 0.0f && std::isnormal(alpha);
}

bool is_clamp(const Graph& graph, const Node& node) {
  if (node.inputs.empty() || !is_activation(graph, node.inputs[0])) return false;
  if (!has_one_float_output(graph, node)) return false;
  if (shape_of(graph, node.outputs[0]) != shape_of(graph, node.inputs[0])) return false;
  return clamp_bounds(graph, node).has_value();
}

bool is_hard_sigmoid(const Graph& graph, const Node& node) {
  return is_unary(graph, node) && std::isfinite(node.attributes.get_float("alpha", 0.2f)) &&
         std::isfinite(node.attributes.get_float("beta", 0.5f));
}

bool is_swish(const Graph& graph, const Node& node) {
  return is_unary(graph, node) && std::isfinite(node.attributes.get_float("alpha", 1.0f));
}

// Only the tanh form: it is x * sigmoid(2u), which XNNPACK's sigmoid computes;
// the default erf form needs an erf this XNNPACK lacks.
bool is_gelu_tanh(const Graph& graph, const Node& node) {
  return is_unary(graph, node) && node.attributes.get_string("approximate", "none") == "tanh";
}

bool is_pow(const Graph& graph, const Node& node) {
  return node.inputs.size() == 2 && is_activation(graph, node.inputs[0]) &&
         has_one_float_output(graph, node) &&
         shape_of(graph, node.outputs[0]) == shape_of(graph, node.inputs[0]) &&
         pow_exponent(graph, node).has_value();
}

// A slope that varies along the channel axis only: axis 1 of a 4-D input
// (channels-last inside), the last axis otherwise.
bool is_prelu(const Graph& graph, const Node& node) {
  if (node.inputs.size() != 2 || !is_activation(graph, node.inputs[0])) return false;
  if (!is_float_constant(graph, node.inputs[1]) || !has_one_float_output(graph, node)) return false;
  const Shape& x = shape_of(graph, node.inputs[0]);
  if (x.empty() || shape_of(graph, node.outputs[0]) != x) return false;
  const Shape& slope = shape_of(graph, node.inputs[1]);
  if (slope.size() > x.size()) return false;
  Shape padded = pad_to_rank(slope, static_cast<int>(x.size()));
  std::size_t channel_axis = x.size() == 4 ? 1 : x.size() - 1;
  for (std::size_t d = 0; d < x.size(); ++d) {
    if (d == channel_axis) {
      if (padded[d] != x[d] && padded[d] != 1) return false;
    } else if (padded[d] != 1) {
      return false;
    }
  }
  return true;
}

bool is_softmax(const Graph& graph, const Node& node) {
  if (node.inputs.size() != 1 || !is_activation(graph, node.inputs[0])) return false;
  if (!has_one_float_output(graph, node) || graph.type(node.inputs[0]).rank() == 0) return false;
  if (softmax_axis(graph, node) < 0) return false;
  return softmax_runs_in(graph, node, Layout::kPlain) ||
         softmax_runs_in(graph, node, Layout::kChannelsLast);
}

bool is_conv(const Graph& graph, const Node& node) {
  if (node.inputs.size() < 2 || node.inputs.size() > 3) return false;
  if (!is_activation(graph, node.inputs[0]) || !is_float_constant(graph, node.inputs[1])) {
    return false;
  }
  if (!has_one_float_output(graph, node)) return false;
  const Shape& x = shape_of(graph, node.inputs[0]);
  const Shape& w = shape_of(graph, node.inputs[1]);
  const Shape& y = shape_of(graph, node.outputs[0]);
  if (x.size() != 4 || w.size() != 4 || y.size() != 4) return false;
  const std::int64_t group = node.attributes.get_int("group", 1);
  if (group <= 0 || x[1] % group != 0) return false;
  const bool transposed = node.op_type == "ConvTranspose";
  // Conv weights are [M, C/group, kH, kW]; ConvTranspose weights are [C, M/group, kH, kW].
  const std::int64_t out_channels = transposed ? w[1] * group : w[0];
  if (transposed ? w[0] != x[1] : (w[1] * group != x[1] || w[0] % group != 0)) return false;
  if (y[0] != x[0] || y[1] != out_channels) return false;
  if (present(node, 2)) {
    if (!is_float_constant(graph, node.inputs[2])) return false;
    if (shape_of(graph, node.inputs[2]) != Shape{out_channels}) return false;
  }
  return conv_window(graph, node).has_value();
}

bool is_pool(const Graph& graph, const Node& node) {
  if (node.inputs.size() != 1) return false;
  const bool eight_bit = is_eight_bit_passthrough(graph, node);
  if (!eight_bit && (!is_activation(graph, node.inputs[0]) || !has_one_float_output(graph, node))) {
    return false;
  }
  const Shape& x = shape_of(graph, node.inputs[0]);
  const Shape& y = shape_of(graph, node.outputs[0]);
  if (x.size() != 4 || y.size() != 4 || y[0] != x[0] || y[1] != x[1]) return false;
  const auto window = pool_window(graph, node);
  if (!window) return false;
  // A dilated window over padding is padded with -inf first (emit_max_pool),
  // which has no 8-bit value.
  const bool dilated = window->dilation_h > 1 || window->dilation_w > 1;
  return !(eight_bit && dilated && window->has_padding());
}

bool is_global_pool(const Graph& graph, const Node& node) {
  if (node.inputs.size() != 1 || !is_activation(graph, node.inputs[0])) return false;
  if (!has_one_float_output(graph, node)) return false;
  const Shape& x = shape_of(graph, node.inputs[0]);
  return x.size() == 4 && shape_of(graph, node.outputs[0]) == Shape{x[0], x[1], 1, 1};
}

bool is_gemm(const Graph& graph, const Node& node) {
  if (node.inputs.size() < 2 || node.inputs.size() > 3) return false;
  if (!is_activation(graph, node.inputs[0]) || !is_float_constant(graph, node.inputs[1])) {
    return false;
  }
  if (!has_one_float_output(graph, node)) return false;
  if (node.attributes.get_int("transA", 0) != 0) return false;
  const Shape& a = shape_of(graph, node.inputs[0]);
  const Shape& b = shape_of(graph, node.inputs[1]);
  const Shape& y = shape_of(graph, node.outputs[0]);
  if (a.size() != 2 || b.size() != 2 || y.size() != 2) return false;
  const bool trans_b = node.attributes.get_int("transB", 0) != 0;
  const std::int64_t k = trans_b ? b[1] : b[0];
  const std::int64_t n = trans_b ? b[0] : b[1];
  if (a[1] != k || y != Shape{a[0], n}) return false;
  if (!std::isfinite(node.attributes.get_float("alpha", 1.0f))) return false;
  if (!present(node, 2)) return true;
  ValueId c = node.inputs[2];
  if (!is_float_tensor(graph, c)) return false;
  const Shape& c_shape = shape_of(graph, c);
  if (c_shape.size() > 2) return false;
  Shape padded = pad_to_rank(c_shape, 2);
  if ((padded[0] != 1 && padded[0] != a[0]) || (padded[1] != 1 && padded[1] != n)) return false;
  // A computed C is added as it is; only a constant one can absorb beta.
  const float beta = node.attributes.get_float("beta", 1.0f);
  return graph.value(c).is_constant() ? std::isfinite(beta) : beta == 1.0f;
}

// MatMul by a constant matrix: a fully connected layer over the last axis.
bool is_matmul(const Graph& graph, const Node& node) {
  if (node.inputs.size() != 2 || !is_activation(graph, node.inputs[0])) return false;
  if (!is_float_constant(graph, node.inputs[1]) || !has_one_float_output(graph, node)) return false;
  const Shape& a = shape_of(graph, node.inputs[0]);
  const Shape& b = shape_of(graph, node.inputs[1]);
  const Shape& y = shape_of(graph, node.outputs[0]);
  if (a.size() < 2 || b.size() != 2 || y.size() != a.size() || a.back() != b[0]) return false;
  Shape expected = a;
  expected.back() = b[1];
  return y == expected;
}

bool is_batch_norm(const Graph& graph, const Node& node) {
  if (node.inputs.size() != 5 || !is_activation(graph, node.inputs[0])) return false;
  if (!has_one_float_output(graph, node)) return false;
  if (node.attributes.get_int("training_mode", 0) != 0) return false;
  if (node.attributes.get_int("spatial", 1) != 1) return false;
  const Shape& x = shape_of(graph, node.inputs[0]);
  if (x.size() < 2 || shape_of(graph, node.outputs[0]) != x) return false;
  for (std::size_t i = 1; i < 5; ++i) {
    if (!is_float_constant(graph, node.inputs[i])) return false;
    if (graph.type(node.inputs[i]).numel() != x[1]) return false;
  }
  return std::isfinite(node.attributes.get_float("epsilon", 1e-5f));
}

bool is_pad(const Graph& graph, const Node& node) {
  if (node.inputs.empty() || !is_activation(graph, node.inputs[0])) return false;
  if (!has_one_float_output(graph, node)) return false;
  return constant_pad(graph, node).has_value();
}

// Reshape-like ops: XNNPACK copies the data into the output's static shape,
// so the shape-giving inputs only have to be constants.
bool is_reshape(const Graph& graph, const Node& node) {
  if (node.inputs.empty()) return false;
  const bool float_values =
      is_activation(graph, node.inputs[0]) && has_one_float_output(graph, node);
  if (!float_values && !is_eight_bit_passthrough(graph, node)) return false;
  for (std::size_t i = 1; i < node.inputs.size(); ++i) {
    if (present(node, i) && !graph.value(node.inputs[i]).is_constant()) return false;
  }
  return graph.type(node.outputs[0]).numel() == graph.type(node.inputs[0]).numel();
}

bool is_depth_to_space(const Graph& graph, const Node& node) {
  if (node.inputs.size() != 1 || !is_activation(graph, node.inputs[0])) return false;
  if (!has_one_float_output(graph, node)) return false;
  // XNNPACK's channel order is ONNX's DCR; CRD interleaves channels differently.
  if (node.attributes.get_string("mode", "DCR") != "DCR") return false;
  const std::int64_t block = node.attributes.get_int("blocksize", 0);
  const Shape& x = shape_of(graph, node.inputs[0]);
  if (block < 2 || x.size() != 4 || x[1] % (block * block) != 0) return false;
  return shape_of(graph, node.outputs[0]) ==
         Shape{x[0], x[1] / (block * block), x[2] * block, x[3] * block};
}

// Bilinear Resize of H and W. XNNPACK derives each axis' scale from the
// sizes (in / out), so a scales input must equal out / in; its coordinate
// modes are ONNX's half_pixel (default), align_corners and asymmetric
// (XNNPACK's TensorFlow legacy mode).
bool is_resize(const Graph& graph, const Node& node) {
  if (graph.opset < 11 || node.inputs.empty() || node.inputs.size() > 4) return false;
  if (node.outputs.size() != 1 || node.input(0) == kNoValue) return false;
  // Float32, or 8-bit values of one type (XNNPACK's int8 bilinear resize,
  // which keeps their quantization).
  const DType x_type = graph.type(node.input(0)).dtype;
  const bool eight_bit = (x_type == DType::kInt8 || x_type == DType::kUInt8) &&
                         graph.type(node.outputs[0]).dtype == x_type &&
                         !graph.value(node.input(0)).is_constant();
  if (!eight_bit && (!is_activation(graph, node.inputs[0]) || !has_one_float_output(graph, node))) {
    return false;
  }
  for (std::size_t i = 1; i < node.inputs.size(); ++i) {
    if (present(node, i) && !graph.value(node.inputs[i]).is_constant()) return false;
  }
  if (node.attributes.get_string("mode", "nearest") != "linear") return false;
  if (node.attributes.get_int("antialias", 0) != 0 || node.attributes.has("axes")) return false;
  if (node.attributes.get_string("keep_aspect_ratio_policy", "stretch") != "stretch") return false;
  if (!resize_flags(node).has_value()) return false;
  const Shape& x = shape_of(graph, node.inputs[0]);
  const Shape& y = shape_of(graph, node.outputs[0]);
  if (x.size() != 4 || y.size() != 4 || y[0] != x[0] || y[1] != x[1]) return false;
  // Both modes map a single output row to the input's first row; XNNPACK does not.
  const std::string mode =
      node.attributes.get_string("coordinate_transformation_mode", "half_pixel");
  if ((mode == "align_corners" || mode == "pytorch_half_pixel") && (y[2] == 1 || y[3] == 1)) {
    return false;
  }
  const ValueId scales = node.input(2);
  if (scales == kNoValue || graph.type(scales).numel() == 0) return true;
  const Tensor& values = *graph.value(scales).constant;
  if (values.dtype() != DType::kFloat32 || values.numel() != 4) return false;
  if (values.data<float>()[0] != 1.0f || values.data<float>()[1] != 1.0f) return false;
  for (int axis = 2; axis < 4; ++axis) {
    const double scale = values.data<float>()[axis];
    const double exact = static_cast<double>(y[axis]) / static_cast<double>(x[axis]);
    if (std::abs(scale - exact) > 1e-6 * exact) return false;
  }
  return true;
}

namespace {

bool pads_inside_kernel(const Window2d& w) {
  return w.pad_top < w.extent_h && w.pad_bottom < w.extent_h && w.pad_left < w.extent_w &&
         w.pad_right < w.extent_w;
}

}  // namespace

const float* float_data(const Graph& graph, ValueId value) {
  return graph.value(value).constant->data<float>();
}

std::optional<float> constant_scalar(const Graph& graph, ValueId value) {
  if (value == kNoValue || !graph.value(value).is_constant()) return std::nullopt;
  const Tensor& tensor = *graph.value(value).constant;
  if (tensor.numel() != 1 || tensor.dtype() != DType::kFloat32) return std::nullopt;
  return tensor.data<float>()[0];
}

std::optional<ClampBounds> clamp_bounds(const Graph& graph, const Node& node) {
  if (node.op_type == "Relu") {
    if (node.inputs.size() != 1) return std::nullopt;
    return ClampBounds{0.0f, std::numeric_limits<float>::infinity()};
  }
  ClampBounds bounds{std::numeric_limits<float>::lowest(), std::numeric_limits<float>::max()};
  if (graph.opset < 11) {
    if (node.inputs.size() != 1) return std::nullopt;
    bounds.min = node.attributes.get_float("min", bounds.min);
    bounds.max = node.attributes.get_float("max", bounds.max);
  } else {
    if (node.inputs.size() > 3) return std::nullopt;
    for (std::size_t i = 1; i < 3; ++i) {
      if (!present(node, i)) continue;
      auto bound = constant_scalar(graph, node.inputs[i]);
      if (!bound) return std::nullopt;
      (i == 1 ? bounds.min : bounds.max) = *bound;
    }
  }
  // XNNPACK needs min < max; ONNX's min > max case (all outputs = max) is not a clamp.
  if (std::isnan(bounds.min) || std::isnan(bounds.max) || !(bounds.min < bounds.max)) {
    return std::nullopt;
  }
  return bounds;
}

ChannelAffine batch_norm_affine(const Graph& graph, const Node& node) {
  const float* gamma = float_data(graph, node.inputs[1]);
  const float* beta = float_data(graph, node.inputs[2]);
  const float* mean = float_data(graph, node.inputs[3]);
  const float* variance = float_data(graph, node.inputs[4]);
  const double epsilon = node.attributes.get_float("epsilon", 1e-5f);
  const auto channels = static_cast<std::size_t>(graph.type(node.inputs[1]).numel());
  ChannelAffine affine{std::vector<double>(channels), std::vector<double>(channels)};
  for (std::size_t c = 0; c < channels; ++c) {
    affine.scale[c] = gamma[c] / std::sqrt(static_cast<double>(variance[c]) + epsilon);
    affine.shift[c] = beta[c] - mean[c] * affine.scale[c];
  }
  return affine;
}

std::optional<ConstantPad> constant_pad(const Graph& graph, const Node& node) {
  if (node.attributes.get_string("mode", "constant") != "constant") return std::nullopt;
  const std::size_t rank = static_cast<std::size_t>(graph.type(node.inputs[0]).rank());
  std::vector<std::int64_t> pads;
  ConstantPad result;
  if (graph.opset < 11) {
    if (node.inputs.size() != 1) return std::nullopt;
    pads = node.attributes.get_ints("pads", {});
    result.value = node.attributes.get_float("value", 0.0f);
  } else {
    if (node.inputs.size() < 2 || node.inputs.size() > 3 || !present(node, 1)) return std::nullopt;
    const Value& pads_value = graph.value(node.inputs[1]);
    if (!pads_value.is_constant() || pads_value.type.dtype != DType::kInt64) return std::nullopt;
    for (std::int64_t i = 0; i < pads_value.constant->numel(); ++i) {
      pads.push_back(pads_value.constant->int_at(i));
    }
    if (present(node, 2)) {
      auto value = constant_scalar(graph, node.inputs[2]);
      if (!value) return std::nullopt;
      result.value = *value;
    }
  }
  if (pads.size() != 2 * rank || rank == 0) return std::nullopt;
  // Negative pads crop, which XNNPACK's pad cannot do.
  if (std::any_of(pads.begin(), pads.end(), [](std::int64_t p) { return p < 0; })) {
    return std::nullopt;
  }
  result.pre.assign(pads.begin(), pads.begin() + static_cast<std::ptrdiff_t>(rank));
  result.post.assign(pads.begin() + static_cast<std::ptrdiff_t>(rank), pads.end());
  Shape expected = graph.type(node.inputs[0]).shape;
  for (std::size_t d = 0; d < rank; ++d) expected[d] += result.pre[d] + result.post[d];
  if (expected != graph.type(node.outputs[0]).shape) return std::nullopt;
  return result;
}

std::int64_t softmax_axis(const Graph& graph, const Node& node) {
  const std::int64_t rank = graph.type(node.inputs[0]).rank();
  std::int64_t axis = node.attributes.get_int("axis", graph.opset < 13 ? 1 : -1);
  if (axis < 0) axis += rank;
  return axis >= 0 && axis < rank ? axis : -1;
}

bool softmax_runs_in(const Graph& graph, const Node& node, Layout layout) {
  const Shape& shape = graph.type(node.inputs[0]).shape;
  const std::int64_t axis = softmax_axis(graph, node);
  if (axis < 0) return false;
  // Before opset 13, Softmax normalizes over all axes from `axis` on; since 13
  // over `axis` alone. XNNPACK normalizes over the innermost dimension.
  const bool coerced = graph.opset < 13;
  if (layout == Layout::kPlain) {
    if (coerced) return true;
    std::int64_t inner = 1;
    for (std::size_t d = static_cast<std::size_t>(axis) + 1; d < shape.size(); ++d) {
      inner *= shape[d];
    }
    return inner == 1;
  }
  // Channels-last [N,H,W,C]: C is innermost, and {C,H,W} are the trailing axes.
  if (shape.size() != 4) return false;
  return coerced ? axis <= 1 : axis == 1;
}

std::optional<Window2d> conv_window(const Graph& graph, const Node& node) {
  const bool quantized = node.op_type == "QLinearConv" || node.op_type == "QLinearConvTranspose";
  const std::size_t weights = quantized ? 3 : 1;
  if (node.input(weights) == kNoValue) return std::nullopt;
  const Shape& w = graph.type(node.inputs[weights]).shape;
  if (w.size() != 4) return std::nullopt;
  const Shape& x = graph.type(node.inputs[0]).shape;
  const Shape& y = graph.type(node.outputs[0]).shape;
  if (node.op_type == "ConvTranspose" || node.op_type == "QLinearConvTranspose") {
    return resolve_transposed_window(node, x, y, w[2], w[3]);
  }
  return resolve_window(node, x, y, w[2], w[3], false);
}

std::optional<Window2d> pool_window(const Graph& graph, const Node& node) {
  auto kernel = node.attributes.get_ints("kernel_shape", {});
  if (kernel.size() != 2) return std::nullopt;
  // XNNPACK rejects 1x1 pooling windows.
  if (kernel[0] * kernel[1] <= 1) return std::nullopt;
  if (node.op_type == "AveragePool" || node.op_type == "QLinearAveragePool") {
    auto dilations = node.attributes.get_ints("dilations", {1, 1});
    if (dilations != std::vector<std::int64_t>{1, 1}) return std::nullopt;
  }
  const bool ceil_mode = node.attributes.get_int("ceil_mode", 0) != 0;
  auto window = resolve_window(node, graph.type(node.inputs[0]).shape,
                               graph.type(node.outputs[0]).shape, kernel[0], kernel[1], ceil_mode);
  // A window made of padding only has no value to take.
  if (!window || !pads_inside_kernel(*window)) return std::nullopt;
  return window;
}

std::optional<std::uint32_t> resize_flags(const Node& node) {
  const std::string mode =
      node.attributes.get_string("coordinate_transformation_mode", "half_pixel");
  if (mode == "half_pixel" || mode == "pytorch_half_pixel") return 0u;
  if (mode == "align_corners") return static_cast<std::uint32_t>(XNN_FLAG_ALIGN_CORNERS);
  if (mode == "asymmetric") return static_cast<std::uint32_t>(XNN_FLAG_TENSORFLOW_LEGACY_MODE);
  return std::nullopt;
}

std::optional<float> pow_exponent(const Graph& graph, const Node& node) {
  auto exponent = constant_scalar(graph, node.input(1));
  if (!exponent || (*exponent != 2.0f && *exponent != 0.5f)) return std::nullopt;
  return exponent;
}

}  // namespace collage::xnnpack
