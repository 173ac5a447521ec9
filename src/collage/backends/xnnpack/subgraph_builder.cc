#include "collage/backends/xnnpack/subgraph_builder.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "collage/backends/xnnpack/layout_plan.h"
#include "collage/backends/xnnpack/op_support.h"
#include "collage/backends/xnnpack/window_2d.h"

namespace collage::xnnpack {
namespace {

using Dims = std::vector<std::size_t>;

constexpr float kNoMin = -std::numeric_limits<float>::infinity();
constexpr float kNoMax = std::numeric_limits<float>::infinity();
constexpr std::uint32_t kInvalid = XNN_INVALID_VALUE_ID;

// xnn_define_add2, xnn_define_multiply2, ...: c = clamp(a <op> b, min, max).
using BinaryDefine = xnn_status (*)(xnn_subgraph_t subgraph, float output_min, float output_max,
                                    std::uint32_t input1_id, std::uint32_t input2_id,
                                    std::uint32_t output_id, std::uint32_t flags);

const float* float_data(const Graph& graph, ValueId value) {
  return graph.value(value).constant->data<float>();
}

Shape broadcast_shapes(const Shape& a, const Shape& b) {
  Shape result(a.size());
  for (std::size_t d = 0; d < a.size(); ++d) result[d] = std::max(a[d], b[d]);
  return result;
}

std::uint32_t u32(std::int64_t v) { return static_cast<std::uint32_t>(v); }

// A Conv's weights as XNNPACK's filter, each output channel scaled by `scale`
// (a folded BatchNormalization): [1, kH, kW, M] for a depthwise convolution,
// OHWI otherwise.
struct ConvFilter {
  std::vector<float> data;
  Dims dims;
};

ConvFilter conv_filter(const float* weights, const Shape& w_shape, const std::vector<double>& scale,
                       bool depthwise) {
  const auto out_channels = static_cast<std::size_t>(w_shape[0]);
  const auto group_channels = static_cast<std::size_t>(w_shape[1]);
  const auto kh = static_cast<std::size_t>(w_shape[2]);
  const auto kw = static_cast<std::size_t>(w_shape[3]);
  ConvFilter filter{std::vector<float>(out_channels * group_channels * kh * kw), {}};
  if (depthwise) {
    filter.dims = {1, kh, kw, out_channels};
    for (std::size_t m = 0; m < out_channels; ++m) {
      for (std::size_t i = 0; i < kh * kw; ++i) {
        filter.data[i * out_channels + m] = static_cast<float>(weights[m * kh * kw + i] * scale[m]);
      }
    }
    return filter;
  }
  // OIHW -> OHWI.
  filter.dims = {out_channels, kh, kw, group_channels};
  for (std::size_t m = 0; m < out_channels; ++m) {
    for (std::size_t c = 0; c < group_channels; ++c) {
      for (std::size_t i = 0; i < kh * kw; ++i) {
        filter.data[(m * kh * kw + i) * group_channels + c] =
            static_cast<float>(weights[(m * group_channels + c) * kh * kw + i] * scale[m]);
      }
    }
  }
  return filter;
}

class Builder {
 public:
  Builder(const Graph& graph, const LayoutPlan& plan)
      : graph_(graph), plan_(plan), slots_(graph.num_values()), consumers_(graph.consumers()) {}

  Result<BuiltSubgraph> build();

 private:
  // Where a computed value lives in the subgraph.
  struct Slot {
    std::uint32_t id = kInvalid;
    Layout layout = Layout::kPlain;
  };

  void plan_fusions();
  // XNNPACK gives no buffer to a value nothing reads, and then fails an
  // assertion; nodes no output depends on are left out.
  void mark_live_nodes();
  // Input 0 and output 0 of an op that reads one activation, in the one
  // layout the op runs in.
  struct Io {
    std::uint32_t x = kInvalid;
    std::uint32_t y = kInvalid;
    Layout layout = Layout::kPlain;
  };
  // What every emitter of such an op starts with: `in` read in `layout` and
  // `out` defined in it; nullopt when either fails (the failure is recorded).
  std::optional<Io> bind_io(ValueId in, ValueId out, Layout layout);
  // Input 0 and output 0 of `node`, in `layout`.
  std::optional<Io> bind_io(const Node& node, Layout layout) {
    return bind_io(node.inputs[0], node.outputs[0], layout);
  }
  // Input 0 and output 0 of `node`, whose output follows its input's layout.
  std::optional<Io> bind_io(const Node& node) {
    return bind_io(node, follow_layout(node.inputs[0], node.outputs[0]));
  }

  bool emit(NodeId id, const Node& node);
  bool emit_unary(const Node& node);
  bool emit_hard_sigmoid(const Node& node);
  bool emit_swish(const Node& node);
  bool emit_gelu_tanh(const Node& node);
  // y = x * sigmoid(argument(x, dims)): Swish and the tanh form of Gelu.
  template <typename Argument>
  bool emit_x_times_sigmoid(const Node& node, Argument argument);
  bool emit_broadcast(const Node& node);
  bool emit_batch_norm(const Node& node);
  bool emit_prelu(const Node& node);
  bool emit_softmax(const Node& node);
  bool emit_pad(const Node& node);
  bool emit_reshape(const Node& node);
  bool emit_conv(NodeId id, const Node& node);
  bool emit_conv_transpose(const Node& node);
  bool emit_pool(const Node& node);
  bool emit_global_pool(const Node& node);
  bool emit_depth_to_space(const Node& node);
  bool emit_resize(const Node& node);
  bool emit_gemm(const Node& node);
  bool emit_matmul(NodeId id, const Node& node);

  bool define_boundary();
  std::uint32_t define_output(ValueId value, Layout layout);
  std::uint32_t define_internal(const Dims& dims);
  std::uint32_t define_static(std::vector<float> data, const Dims& dims);
  // A static scalar of `rank` (all dims 1), which the binary ops broadcast.
  std::uint32_t define_scalar(float value, std::size_t rank);
  // A new internal value of `dims` computed from `a` and `b` by `define`
  // (unclamped); kInvalid when an operand is, or XNNPACK refuses.
  std::uint32_t binary(BinaryDefine define, const char* what, std::uint32_t a, std::uint32_t b,
                       const Dims& dims);
  // sigmoid(`x`) as a new internal value of `dims`.
  std::uint32_t sigmoid(std::uint32_t x, const Dims& dims);
  // `value` in `layout`, reshaped into it when the value is layout-free.
  std::uint32_t use(ValueId value, Layout layout);
  // `value` with its elements in logical row-major order, whatever its dims.
  std::uint32_t use_in_logical_order(ValueId value);
  // `value` with the rank of `out_shape` (leading 1s) in `layout`, ready for
  // a broadcasting binary op; constants are re-laid out at compile time.
  std::uint32_t broadcast_operand(ValueId value, const Shape& out_shape, Layout layout);
  std::uint32_t reshape(std::uint32_t source, const Dims& dims);
  // The channels-last 4-D value `x` of logical shape `x_shape`, padded by
  // `value`: window.pad_top / pad_left before, `bottom` / `right` after.
  std::uint32_t pad_channels_last(std::uint32_t x, const Shape& x_shape, const Window2d& window,
                                  float value, std::int64_t bottom, std::int64_t right);
  // The layout of an op whose output follows its input's layout.
  Layout follow_layout(ValueId in, ValueId out) const;

  bool check(xnn_status status, const char* what);
  bool fail(std::string reason);

  const Shape& shape(ValueId value) const { return graph_.type(value).shape; }
  xnn_subgraph_t subgraph() const { return result_.subgraph.get(); }

  const Graph& graph_;
  const LayoutPlan& plan_;
  BuiltSubgraph result_;
  std::vector<Slot> slots_;
  std::map<std::pair<ValueId, Layout>, std::uint32_t> converted_;
  std::vector<std::vector<NodeId>> consumers_;
  // Conv -> the BatchNormalization folded into it; MatMul -> the bias Add.
  std::map<NodeId, NodeId> absorbs_;
  std::vector<bool> absorbed_;
  std::vector<bool> live_;
  std::map<ValueId, std::size_t> output_index_;
  const Node* current_ = nullptr;
  std::string failure_;
};

Result<BuiltSubgraph> Builder::build() {
  const auto externals =
      static_cast<std::uint32_t>(graph_.inputs().size() + graph_.outputs().size());
  xnn_subgraph_t raw = nullptr;
  if (!check(xnn_create_subgraph(externals, 0, &raw), "subgraph creation")) {
    return Failure{failure_};
  }
  result_.subgraph.reset(raw);
  if (!define_boundary()) return Failure{failure_};
  plan_fusions();
  mark_live_nodes();
  const auto nodes = graph_.nodes();
  for (std::size_t n = 0; n < nodes.size(); ++n) {
    if (absorbed_[n] || !live_[n]) continue;
    current_ = &nodes[n];
    if (!emit(static_cast<NodeId>(n), nodes[n])) return Failure{failure_};
  }
  for (ValueId output : graph_.outputs()) {
    if (slots_[static_cast<std::size_t>(output)].id == kInvalid) {
      return Failure{fmt::format("output '{}' is not computed", graph_.value(output).name)};
    }
  }
  return std::move(result_);
}

bool Builder::define_boundary() {
  const auto& inputs = graph_.inputs();
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    ValueId value = inputs[k];
    const TensorType& type = graph_.type(value);
    if (type.dtype != DType::kFloat32 || type.rank() > XNN_MAX_TENSOR_DIMS || type.numel() == 0) {
      return fail(fmt::format("input '{}' ({}) is not a float32 tensor XNNPACK can hold",
                              graph_.value(value).name, type.to_string()));
    }
    Layout layout = type.rank() == 4 ? plan_.layout(value) : Layout::kPlain;
    Dims dims = xnn_dims(type.shape, layout);
    std::uint32_t id = kInvalid;
    if (!check(xnn_define_tensor_value(subgraph(), xnn_datatype_fp32, dims.size(), dims.data(),
                                       nullptr, static_cast<std::uint32_t>(k),
                                       XNN_VALUE_FLAG_EXTERNAL_INPUT, &id),
               "input value")) {
      return false;
    }
    slots_[static_cast<std::size_t>(value)] = {id, layout};
    result_.inputs.push_back({id, type, layout});
  }
  const auto& outputs = graph_.outputs();
  for (std::size_t k = 0; k < outputs.size(); ++k) {
    ValueId value = outputs[k];
    const Value& info = graph_.value(value);
    if (info.producer == kNoNode || output_index_.count(value) != 0) {
      return fail(fmt::format("output '{}' is not computed by exactly one node of the partition",
                              info.name));
    }
    output_index_[value] = k;
    result_.outputs.push_back(
        {static_cast<std::uint32_t>(inputs.size() + k), info.type, Layout::kPlain});
  }
  return true;
}

void Builder::plan_fusions() {
  absorbed_.assign(graph_.num_nodes(), false);
  // The value `node` reads at `input` when only that node reads it and it
  // leaves nothing else behind: then the producer can compute `node` too.
  auto private_input = [&](const Node& node, std::size_t input, const char* producer_op) {
    ValueId value = node.input(input);
    if (value == kNoValue || graph_.is_output(value)) return kNoNode;
    NodeId producer = graph_.value(value).producer;
    if (producer == kNoNode || graph_.node(producer).op_type != producer_op) return kNoNode;
    if (consumers_[static_cast<std::size_t>(value)].size() != 1) return kNoNode;
    if (std::count(node.inputs.begin(), node.inputs.end(), value) != 1) return kNoNode;
    return producer;
  };
  const auto nodes = graph_.nodes();
  for (std::size_t n = 0; n < nodes.size(); ++n) {
    const Node& node = nodes[n];
    if (node.op_type == "BatchNormalization") {
      NodeId conv = private_input(node, 0, "Conv");
      if (conv == kNoNode) continue;
      absorbs_[conv] = static_cast<NodeId>(n);
      absorbed_[n] = true;
      continue;
    }
    if (node.op_type != "Add" || node.inputs.size() != 2) continue;
    for (std::size_t side = 0; side < 2; ++side) {
      NodeId matmul = private_input(node, side, "MatMul");
      ValueId bias = node.inputs[1 - side];
      if (matmul == kNoNode || !graph_.value(bias).is_constant()) continue;
      const Shape& product = shape(node.inputs[side]);
      if (shape(node.outputs[0]) != product || shape(bias).size() > product.size()) continue;
      // A bias vector over the output features: all dims 1 but the last.
      Shape aligned = pad_to_rank(shape(bias), static_cast<int>(product.size()));
      bool vector = aligned.back() == product.back() && shape_numel(aligned) == product.back();
      if (!vector) continue;
      absorbs_[matmul] = static_cast<NodeId>(n);
      absorbed_[n] = true;
      break;
    }
  }
}

void Builder::mark_live_nodes() {
  std::vector<bool> needed(graph_.num_values(), false);
  for (ValueId output : graph_.outputs()) needed[static_cast<std::size_t>(output)] = true;
  live_.assign(graph_.num_nodes(), false);
  const auto nodes = graph_.nodes();
  for (std::size_t n = nodes.size(); n-- > 0;) {
    const Node& node = nodes[n];
    live_[n] = std::any_of(node.outputs.begin(), node.outputs.end(),
                           [&](ValueId v) { return needed[static_cast<std::size_t>(v)]; });
    if (!live_[n]) continue;
    for (ValueId input : node.inputs) {
      if (input != kNoValue) needed[static_cast<std::size_t>(input)] = true;
    }
  }
}

bool Builder::emit(NodeId id, const Node& node) {
  switch (emitter(node)) {
    case Emitter::kUnary:
      return emit_unary(node);
    case Emitter::kHardSigmoid:
      return emit_hard_sigmoid(node);
    case Emitter::kSwish:
      return emit_swish(node);
    case Emitter::kGeluTanh:
      return emit_gelu_tanh(node);
    case Emitter::kBroadcast:
      return emit_broadcast(node);
    case Emitter::kBatchNorm:
      return emit_batch_norm(node);
    case Emitter::kPrelu:
      return emit_prelu(node);
    case Emitter::kSoftmax:
      return emit_softmax(node);
    case Emitter::kPad:
      return emit_pad(node);
    case Emitter::kReshape:
      return emit_reshape(node);
    case Emitter::kConv:
      return emit_conv(id, node);
    case Emitter::kConvTranspose:
      return emit_conv_transpose(node);
    case Emitter::kPool:
      return emit_pool(node);
    case Emitter::kGlobalPool:
      return emit_global_pool(node);
    case Emitter::kDepthToSpace:
      return emit_depth_to_space(node);
    case Emitter::kResize:
      return emit_resize(node);
    case Emitter::kGemm:
      return emit_gemm(node);
    case Emitter::kMatMul:
      return emit_matmul(id, node);
  }
  return false;
}

bool Builder::emit_unary(const Node& node) {
  const auto io = bind_io(node);
  if (!io) return false;
  const std::uint32_t x = io->x;
  const std::uint32_t y = io->y;
  xnn_subgraph_t g = subgraph();
  const std::string& op = node.op_type;
  if (op == "Relu" || op == "Clip") {
    auto bounds = clamp_bounds(graph_, node);
    if (!bounds) return fail("the clip bounds are not constant");
    return check(xnn_define_clamp(g, bounds->min, bounds->max, x, y, 0), "clamp");
  }
  if (op == "Sigmoid") return check(xnn_define_sigmoid(g, x, y, 0), "sigmoid");
  if (op == "HardSwish") return check(xnn_define_hardswish(g, x, y, 0), "hardswish");
  if (op == "Abs") return check(xnn_define_abs(g, x, y, 0), "abs");
  if (op == "Neg") return check(xnn_define_negate(g, x, y, 0), "negate");
  if (op == "Floor") return check(xnn_define_floor(g, x, y, 0), "floor");
  if (op == "Ceil") return check(xnn_define_ceiling(g, x, y, 0), "ceiling");
  if (op == "Sqrt") return check(xnn_define_square_root(g, x, y, 0), "square root");
  // ONNX rounds halves to even, as bankers' rounding does.
  if (op == "Round") return check(xnn_define_bankers_rounding(g, x, y, 0), "bankers rounding");
  if (op == "LeakyRelu") {
    return check(xnn_define_leaky_relu(g, node.attributes.get_float("alpha", 0.01f), x, y, 0),
                 "leaky relu");
  }
  if (op == "Elu") {
    return check(xnn_define_elu(g, node.attributes.get_float("alpha", 1.0f), x, y, 0), "elu");
  }
  if (op == "Pow") {
    auto exponent = pow_exponent(graph_, node);
    if (exponent == 2.0f) return check(xnn_define_square(g, x, y, 0), "square");
    if (exponent == 0.5f) return check(xnn_define_square_root(g, x, y, 0), "square root");
    return fail("the exponent is neither 2 nor 0.5");
  }
  if (op == "Identity") {
    Dims dims = xnn_dims(shape(node.outputs[0]), io->layout);
    return check(xnn_define_static_reshape(g, dims.size(), dims.data(), x, y, 0), "identity");
  }
  return fail(fmt::format("op {} is not supported", op));
}

bool Builder::emit_hard_sigmoid(const Node& node) {
  const auto io = bind_io(node);
  if (!io) return false;
  // max(0, min(1, alpha * x + beta)): a multiply, then an add clamped to [0, 1].
  const Dims dims = xnn_dims(shape(node.inputs[0]), io->layout);
  const Dims ones(dims.size(), 1);
  const std::uint32_t alpha = define_static({node.attributes.get_float("alpha", 0.2f)}, ones);
  const std::uint32_t beta = define_static({node.attributes.get_float("beta", 0.5f)}, ones);
  const std::uint32_t scaled = binary(xnn_define_multiply2, "multiply", io->x, alpha, dims);
  if (beta == kInvalid || scaled == kInvalid) return false;
  return check(xnn_define_add2(subgraph(), 0.0f, 1.0f, scaled, beta, io->y, 0), "add");
}

template <typename Argument>
bool Builder::emit_x_times_sigmoid(const Node& node, Argument argument) {
  const auto io = bind_io(node);
  if (!io) return false;
  const Dims dims = xnn_dims(shape(node.inputs[0]), io->layout);
  const std::uint32_t gate = sigmoid(argument(io->x, dims), dims);
  if (gate == kInvalid) return false;
  return check(xnn_define_multiply2(subgraph(), kNoMin, kNoMax, io->x, gate, io->y, 0), "multiply");
}

bool Builder::emit_swish(const Node& node) {
  // x * sigmoid(alpha * x); alpha = 1 (SiLU) needs no scaling.
  const float alpha = node.attributes.get_float("alpha", 1.0f);
  return emit_x_times_sigmoid(node, [&](std::uint32_t x, const Dims& dims) {
    if (alpha == 1.0f) return x;
    return binary(xnn_define_multiply2, "multiply", x, define_scalar(alpha, dims.size()), dims);
  });
}

bool Builder::emit_gelu_tanh(const Node& node) {
  // x / 2 * (1 + tanh(u)) = x * sigmoid(2u), u = sqrt(2 / pi) * (x + 0.044715 * x^3);
  // this XNNPACK has sigmoid but no tanh. 2u = x * (a + b * x^2).
  constexpr float kA = 1.5957691216057308f;  // 2 * sqrt(2 / pi)
  constexpr float kB = kA * 0.044715f;
  return emit_x_times_sigmoid(node, [&](std::uint32_t x, const Dims& dims) {
    const std::uint32_t squared = define_internal(dims);
    if (squared == kInvalid || !check(xnn_define_square(subgraph(), x, squared, 0), "square")) {
      return kInvalid;
    }
    const std::uint32_t cubic =
        binary(xnn_define_multiply2, "multiply", squared, define_scalar(kB, dims.size()), dims);
    const std::uint32_t slope =
        binary(xnn_define_add2, "add", cubic, define_scalar(kA, dims.size()), dims);
    return binary(xnn_define_multiply2, "multiply", x, slope, dims);
  });
}

bool Builder::emit_broadcast(const Node& node) {
  const ValueId out = node.outputs[0];
  const Shape& out_shape = shape(out);
  Layout layout = Layout::kPlain;
  if (is_layout_constrained(graph_, out)) {
    layout = plan_.layout(out);
  } else if (out_shape.size() == 4) {
    // A layout-free output: take the layout of a 4-D activation input, so it needs no reshape.
    for (ValueId input : node.inputs) {
      if (graph_.value(input).is_constant() || shape(input).size() != 4) continue;
      layout = slots_[static_cast<std::size_t>(input)].layout;
      break;
    }
  }
  const int rank = static_cast<int>(out_shape.size());
  std::uint32_t accumulated = broadcast_operand(node.inputs[0], out_shape, layout);
  if (accumulated == kInvalid) return false;
  Shape accumulated_shape = pad_to_rank(shape(node.inputs[0]), rank);
  const std::string& op = node.op_type;
  for (std::size_t i = 1; i < node.inputs.size(); ++i) {
    const std::uint32_t operand = broadcast_operand(node.inputs[i], out_shape, layout);
    if (operand == kInvalid) return false;
    accumulated_shape =
        broadcast_shapes(accumulated_shape, pad_to_rank(shape(node.inputs[i]), rank));
    const bool last = i + 1 == node.inputs.size();
    const std::uint32_t y =
        last ? define_output(out, layout) : define_internal(xnn_dims(accumulated_shape, layout));
    if (y == kInvalid) return false;
    xnn_subgraph_t g = subgraph();
    xnn_status status = xnn_status_success;
    if (op == "Add" || op == "Sum") {
      status = xnn_define_add2(g, kNoMin, kNoMax, accumulated, operand, y, 0);
    } else if (op == "Sub") {
      status = xnn_define_subtract(g, kNoMin, kNoMax, accumulated, operand, y, 0);
    } else if (op == "Mul") {
      status = xnn_define_multiply2(g, kNoMin, kNoMax, accumulated, operand, y, 0);
    } else if (op == "Div") {
      status = xnn_define_divide(g, kNoMin, kNoMax, accumulated, operand, y, 0);
    } else if (op == "Max") {
      status = xnn_define_maximum2(g, accumulated, operand, y, 0);
    } else if (op == "Min") {
      status = xnn_define_minimum2(g, accumulated, operand, y, 0);
    } else {
      return fail(fmt::format("op {} is not supported", op));
    }
    if (!check(status, "binary op")) return false;
    accumulated = y;
  }
  return true;
}

bool Builder::emit_batch_norm(const Node& node) {
  const auto io = bind_io(node);
  if (!io) return false;
  const ChannelAffine affine = batch_norm_affine(graph_, node);
  std::vector<float> scale(affine.scale.begin(), affine.scale.end());
  std::vector<float> shift(affine.shift.begin(), affine.shift.end());
  // Per-channel constants shaped to broadcast along the channel axis.
  const Dims dims = xnn_dims(shape(node.inputs[0]), io->layout);
  Dims channel_dims(dims.size(), 1);
  channel_dims[io->layout == Layout::kChannelsLast && dims.size() == 4 ? 3 : 1] = scale.size();
  const std::uint32_t scale_id = define_static(std::move(scale), channel_dims);
  const std::uint32_t shift_id = define_static(std::move(shift), channel_dims);
  const std::uint32_t scaled = binary(xnn_define_multiply2, "multiply", io->x, scale_id, dims);
  if (shift_id == kInvalid || scaled == kInvalid) return false;
  return check(xnn_define_add2(subgraph(), kNoMin, kNoMax, scaled, shift_id, io->y, 0), "add");
}

bool Builder::emit_prelu(const Node& node) {
  const Shape& x_shape = shape(node.inputs[0]);
  const auto io = bind_io(node, x_shape.size() == 4 ? Layout::kChannelsLast : Layout::kPlain);
  if (!io) return false;
  const std::int64_t channels = x_shape.size() == 4 ? x_shape[1] : x_shape.back();
  const Tensor& slope = *graph_.value(node.inputs[1]).constant;
  std::vector<float> slopes(static_cast<std::size_t>(channels));
  for (std::int64_t c = 0; c < channels; ++c) {
    slopes[static_cast<std::size_t>(c)] = slope.data<float>()[slope.numel() == 1 ? 0 : c];
  }
  const std::uint32_t slope_id =
      define_static(std::move(slopes), {static_cast<std::size_t>(channels)});
  if (slope_id == kInvalid) return false;
  return check(xnn_define_prelu(subgraph(), io->x, slope_id, io->y, 0), "prelu");
}

bool Builder::emit_softmax(const Node& node) {
  const ValueId in = node.inputs[0];
  const Shape& x_shape = shape(in);
  Layout layout = Layout::kPlain;
  if (is_layout_constrained(graph_, in)) {
    layout = plan_.layout(in);
  } else if (x_shape.size() == 4) {
    layout = slots_[static_cast<std::size_t>(in)].layout;
    if (!softmax_runs_in(graph_, node, layout)) {
      layout = layout == Layout::kPlain ? Layout::kChannelsLast : Layout::kPlain;
    }
  }
  const auto io = bind_io(node, layout);
  if (!io) return false;
  // The elements normalized together are the trailing `inner` ones of the
  // stored order: from the axis on (before opset 13), the axis alone (13 on,
  // whose later axes are all 1 in plain order), or C for channels-last.
  const std::int64_t axis = softmax_axis(graph_, node);
  const std::int64_t numel = shape_numel(x_shape);
  std::int64_t outer = 1;
  if (layout == Layout::kChannelsLast && graph_.opset >= 13) {
    outer = numel / x_shape[1];
  } else {
    for (std::int64_t d = 0; d < axis; ++d) outer *= x_shape[static_cast<std::size_t>(d)];
  }
  const std::int64_t inner = numel / outer;
  const Dims dims = xnn_dims(x_shape, layout);
  if (static_cast<std::int64_t>(dims.back()) == inner) {
    return check(xnn_define_softmax(subgraph(), io->x, io->y, 0), "softmax");
  }
  const Dims flat = {static_cast<std::size_t>(outer), static_cast<std::size_t>(inner)};
  const std::uint32_t rows = reshape(io->x, flat);
  const std::uint32_t normalized = define_internal(flat);
  if (rows == kInvalid || normalized == kInvalid) return false;
  if (!check(xnn_define_softmax(subgraph(), rows, normalized, 0), "softmax")) return false;
  return check(
      xnn_define_static_reshape(subgraph(), dims.size(), dims.data(), normalized, io->y, 0),
      "reshape");
}

bool Builder::emit_pad(const Node& node) {
  auto pad = constant_pad(graph_, node);
  if (!pad) return fail("the paddings are not constant and non-negative");
  const auto io = bind_io(node);
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
  return check(xnn_define_static_constant_pad(subgraph(), pre.data(), post.data(), pad->value,
                                              io->x, io->y, 0),
               "constant pad");
}

bool Builder::emit_reshape(const Node& node) {
  const std::uint32_t x = use_in_logical_order(node.inputs[0]);
  if (x == kInvalid) return false;
  const ValueId out = node.outputs[0];
  const std::uint32_t y = define_output(out, Layout::kPlain);
  if (y == kInvalid) return false;
  const Dims dims = xnn_dims(shape(out), Layout::kPlain);
  return check(xnn_define_static_reshape(subgraph(), dims.size(), dims.data(), x, y, 0), "reshape");
}

bool Builder::emit_conv(NodeId id, const Node& node) {
  auto window = conv_window(graph_, node);
  if (!window) return fail("the convolution window does not match the output shape");
  const Shape& w_shape = shape(node.inputs[1]);
  const auto group = static_cast<std::size_t>(node.attributes.get_int("group", 1));
  const auto channels = static_cast<std::size_t>(shape(node.inputs[0])[1]);
  const auto out_channels = static_cast<std::size_t>(w_shape[0]);
  const auto group_channels = static_cast<std::size_t>(w_shape[1]);

  // An inference BatchNormalization after the convolution scales each output
  // channel and shifts it: fold both into the weights and the bias.
  ValueId out = node.outputs[0];
  ChannelAffine affine{std::vector<double>(out_channels, 1.0),
                       std::vector<double>(out_channels, 0.0)};
  if (auto it = absorbs_.find(id); it != absorbs_.end()) {
    const Node& bn = graph_.node(it->second);
    affine = batch_norm_affine(graph_, bn);
    out = bn.outputs[0];
  }
  const float* bias = node.input(2) == kNoValue ? nullptr : float_data(graph_, node.inputs[2]);
  std::vector<float> folded_bias(out_channels);
  for (std::size_t m = 0; m < out_channels; ++m) {
    folded_bias[m] = static_cast<float>((bias ? bias[m] : 0.0) * affine.scale[m] + affine.shift[m]);
  }
  // One input channel per group and as many groups as channels: a depthwise convolution.
  const bool depthwise = group > 1 && group == channels && group_channels == 1;
  ConvFilter filter =
      conv_filter(float_data(graph_, node.inputs[1]), w_shape, affine.scale, depthwise);

  const auto io = bind_io(node.inputs[0], out, Layout::kChannelsLast);
  if (!io) return false;
  const std::uint32_t filter_id = define_static(std::move(filter.data), filter.dims);
  const std::uint32_t bias_id = define_static(std::move(folded_bias), {out_channels});
  if (filter_id == kInvalid || bias_id == kInvalid) return false;
  const Window2d& w = *window;
  if (depthwise) {
    return check(
        xnn_define_depthwise_convolution_2d(
            subgraph(), u32(w.pad_top), u32(w.pad_right), u32(w.pad_bottom), u32(w.pad_left),
            u32(w.kernel_h), u32(w.kernel_w), u32(w.stride_h), u32(w.stride_w), u32(w.dilation_h),
            u32(w.dilation_w), static_cast<std::uint32_t>(out_channels / channels), channels,
            kNoMin, kNoMax, io->x, filter_id, bias_id, io->y, 0),
        "depthwise convolution");
  }
  return check(
      xnn_define_convolution_2d(
          subgraph(), u32(w.pad_top), u32(w.pad_right), u32(w.pad_bottom), u32(w.pad_left),
          u32(w.kernel_h), u32(w.kernel_w), u32(w.stride_h), u32(w.stride_w), u32(w.dilation_h),
          u32(w.dilation_w), static_cast<std::uint32_t>(group), group_channels,
          out_channels / group, kNoMin, kNoMax, io->x, filter_id, bias_id, io->y, 0),
      "convolution");
}

bool Builder::emit_conv_transpose(const Node& node) {
  auto window = conv_window(graph_, node);
  if (!window) return fail("the transposed convolution window does not match the output shape");
  const Shape& w_shape = shape(node.inputs[1]);
  const auto group = static_cast<std::size_t>(node.attributes.get_int("group", 1));
  const auto channels = static_cast<std::size_t>(w_shape[0]);
  const std::size_t group_channels = channels / group;
  const auto group_out_channels = static_cast<std::size_t>(w_shape[1]);
  const std::size_t out_channels = group_out_channels * group;
  const auto kh = static_cast<std::size_t>(w_shape[2]);
  const auto kw = static_cast<std::size_t>(w_shape[3]);
  // [C, M/group, kH, kW] -> [M, kH, kW, C/group], output channels grouped.
  const float* weights = float_data(graph_, node.inputs[1]);
  std::vector<float> filter(out_channels * kh * kw * group_channels);
  for (std::size_t g = 0; g < group; ++g) {
    for (std::size_t c = 0; c < group_channels; ++c) {
      for (std::size_t o = 0; o < group_out_channels; ++o) {
        for (std::size_t i = 0; i < kh * kw; ++i) {
          const std::size_t m = g * group_out_channels + o;
          filter[(m * kh * kw + i) * group_channels + c] =
              weights[((g * group_channels + c) * group_out_channels + o) * kh * kw + i];
        }
      }
    }
  }
  std::vector<float> bias(out_channels, 0.0f);
  if (node.input(2) != kNoValue) {
    const float* b = float_data(graph_, node.inputs[2]);
    std::copy(b, b + out_channels, bias.begin());
  }
  const auto io = bind_io(node, Layout::kChannelsLast);
  if (!io) return false;
  const std::uint32_t filter_id =
      define_static(std::move(filter), {out_channels, kh, kw, group_channels});
  const std::uint32_t bias_id = define_static(std::move(bias), {out_channels});
  if (filter_id == kInvalid || bias_id == kInvalid) return false;
  const Window2d& w = *window;
  return check(xnn_define_deconvolution_2d(
                   subgraph(), u32(w.pad_top), u32(w.pad_right), u32(w.pad_bottom), u32(w.pad_left),
                   u32(w.adjustment_h), u32(w.adjustment_w), u32(w.kernel_h), u32(w.kernel_w),
                   u32(w.stride_h), u32(w.stride_w), u32(w.dilation_h), u32(w.dilation_w),
                   static_cast<std::uint32_t>(group), group_channels, group_out_channels, kNoMin,
                   kNoMax, io->x, filter_id, bias_id, io->y, 0),
               "deconvolution");
}

bool Builder::emit_pool(const Node& node) {
  auto window = pool_window(graph_, node);
  if (!window) return fail("the pooling window does not match the output shape");
  const auto io = bind_io(node, Layout::kChannelsLast);
  if (!io) return false;
  std::uint32_t x = io->x;
  Window2d w = *window;
  const Shape& x_shape = shape(node.inputs[0]);
  if (node.op_type == "MaxPool") {
    // This XNNPACK takes the wrong elements when a dilated window overlaps
    // padding; padding with -inf first leaves it windows inside its input.
    const bool dilated = w.dilation_h > 1 || w.dilation_w > 1;
    if (dilated && w.has_padding()) {
      x = pad_channels_last(x, x_shape, w, -std::numeric_limits<float>::infinity(), w.pad_bottom,
                            w.pad_right);
      if (x == kInvalid) return false;
      w.pad_top = w.pad_left = w.pad_bottom = w.pad_right = 0;
    }
    return check(
        xnn_define_max_pooling_2d(subgraph(), u32(w.pad_top), u32(w.pad_right), u32(w.pad_bottom),
                                  u32(w.pad_left), u32(w.kernel_h), u32(w.kernel_w),
                                  u32(w.stride_h), u32(w.stride_w), u32(w.dilation_h),
                                  u32(w.dilation_w), kNoMin, kNoMax, x, io->y, 0),
        "max pooling");
  }
  // XNNPACK's average leaves padding out of the count. For count_include_pad,
  // the node's own pads become zeros that count; ceil_mode's extra end
  // padding still does not count, as in ONNX Runtime and PyTorch.
  const std::int64_t own_bottom = w.pad_bottom - w.ceil_extra_bottom;
  const std::int64_t own_right = w.pad_right - w.ceil_extra_right;
  const bool counts_pads = node.attributes.get_int("count_include_pad", 0) != 0;
  if (counts_pads && w.pad_top + w.pad_left + own_bottom + own_right > 0) {
    x = pad_channels_last(x, x_shape, w, 0.0f, own_bottom, own_right);
    if (x == kInvalid) return false;
    w.pad_top = w.pad_left = 0;
    w.pad_bottom = w.ceil_extra_bottom;
    w.pad_right = w.ceil_extra_right;
  }
  return check(
      xnn_define_average_pooling_2d(subgraph(), u32(w.pad_top), u32(w.pad_right), u32(w.pad_bottom),
                                    u32(w.pad_left), u32(w.kernel_h), u32(w.kernel_w),
                                    u32(w.stride_h), u32(w.stride_w), kNoMin, kNoMax, x, io->y, 0),
      "average pooling");
}

bool Builder::emit_global_pool(const Node& node) {
  const auto io = bind_io(node, Layout::kChannelsLast);
  if (!io) return false;
  if (node.op_type == "GlobalAveragePool") {
    return check(xnn_define_global_average_pooling_2d(subgraph(), kNoMin, kNoMax, io->x, io->y, 0),
                 "global average pooling");
  }
  const Shape& x_shape = shape(node.inputs[0]);
  const auto height = static_cast<std::uint32_t>(x_shape[2]);
  const auto width = static_cast<std::uint32_t>(x_shape[3]);
  // XNNPACK has no 1x1 pooling; the maximum of one element is the element.
  if (height * width == 1) {
    const Dims dims = xnn_dims(shape(node.outputs[0]), Layout::kChannelsLast);
    return check(xnn_define_static_reshape(subgraph(), dims.size(), dims.data(), io->x, io->y, 0),
                 "reshape");
  }
  return check(xnn_define_max_pooling_2d(subgraph(), 0, 0, 0, 0, height, width, 1, 1, 1, 1, kNoMin,
                                         kNoMax, io->x, io->y, 0),
               "global max pooling");
}

bool Builder::emit_depth_to_space(const Node& node) {
  const auto io = bind_io(node, Layout::kChannelsLast);
  if (!io) return false;
  const auto block = static_cast<std::uint32_t>(node.attributes.get_int("blocksize"));
  return check(xnn_define_depth_to_space(subgraph(), io->x, io->y, block, 0), "depth to space");
}

bool Builder::emit_resize(const Node& node) {
  auto flags = resize_flags(node);
  if (!flags) return fail("the coordinate transformation mode is not supported");
  const auto io = bind_io(node, Layout::kChannelsLast);
  if (!io) return false;
  const Shape& y_shape = shape(node.outputs[0]);
  return check(xnn_define_static_resize_bilinear_2d(
                   subgraph(), static_cast<std::size_t>(y_shape[2]),
                   static_cast<std::size_t>(y_shape[3]), io->x, io->y, *flags),
               "bilinear resize");
}

bool Builder::emit_gemm(const Node& node) {
  const Shape& a_shape = shape(node.inputs[0]);
  const Shape& b_shape = shape(node.inputs[1]);
  const bool trans_b = node.attributes.get_int("transB", 0) != 0;
  const auto k = static_cast<std::size_t>(a_shape[1]);
  const auto n = static_cast<std::size_t>(trans_b ? b_shape[0] : b_shape[1]);
  const float alpha = node.attributes.get_float("alpha", 1.0f);
  const float beta = node.attributes.get_float("beta", 1.0f);
  // XNNPACK's filter is [N, K]: B as it is when transB, transposed otherwise.
  const float* b = float_data(graph_, node.inputs[1]);
  std::vector<float> filter(n * k);
  for (std::size_t row = 0; row < n; ++row) {
    for (std::size_t col = 0; col < k; ++col) {
      filter[row * k + col] = alpha * (trans_b ? b[row * k + col] : b[col * n + row]);
    }
  }
  const auto io = bind_io(node, Layout::kPlain);
  if (!io) return false;
  const std::uint32_t filter_id = define_static(std::move(filter), {n, k});
  if (filter_id == kInvalid) return false;

  // A constant C that is the same for every row is the layer's bias; any
  // other C is added after it.
  const ValueId c = node.input(2);
  if (c == kNoValue) {
    return check(xnn_define_fully_connected(subgraph(), kNoMin, kNoMax, io->x, filter_id, kInvalid,
                                            io->y, 0),
                 "fully connected");
  }
  const Shape aligned = pad_to_rank(shape(c), 2);
  const bool constant = graph_.value(c).is_constant();
  const float* c_data = constant ? float_data(graph_, c) : nullptr;
  if (constant && aligned[0] == 1) {
    std::vector<float> bias(n);
    for (std::size_t col = 0; col < n; ++col) bias[col] = beta * c_data[aligned[1] == 1 ? 0 : col];
    const std::uint32_t bias_id = define_static(std::move(bias), {n});
    if (bias_id == kInvalid) return false;
    return check(
        xnn_define_fully_connected(subgraph(), kNoMin, kNoMax, io->x, filter_id, bias_id, io->y, 0),
        "fully connected");
  }
  const ValueId out = node.outputs[0];
  const std::uint32_t product = define_internal(xnn_dims(shape(out), Layout::kPlain));
  if (product == kInvalid) return false;
  if (!check(xnn_define_fully_connected(subgraph(), kNoMin, kNoMax, io->x, filter_id, kInvalid,
                                        product, 0),
             "fully connected")) {
    return false;
  }
  std::uint32_t addend = kInvalid;
  if (constant) {
    std::vector<float> scaled(c_data, c_data + shape_numel(aligned));
    for (float& v : scaled) v *= beta;
    addend = define_static(std::move(scaled), xnn_dims(aligned, Layout::kPlain));
  } else {
    addend = broadcast_operand(c, shape(out), Layout::kPlain);
  }
  if (addend == kInvalid) return false;
  return check(xnn_define_add2(subgraph(), kNoMin, kNoMax, product, addend, io->y, 0), "add");
}

bool Builder::emit_matmul(NodeId id, const Node& node) {
  const Shape& b_shape = shape(node.inputs[1]);
  const auto k = static_cast<std::size_t>(b_shape[0]);
  const auto n = static_cast<std::size_t>(b_shape[1]);
  const float* b = float_data(graph_, node.inputs[1]);
  std::vector<float> filter(n * k);
  for (std::size_t row = 0; row < n; ++row) {
    for (std::size_t col = 0; col < k; ++col) filter[row * k + col] = b[col * n + row];
  }
  // A bias Add folded into the layer computes the Add's output.
  ValueId out = node.outputs[0];
  ValueId bias = kNoValue;
  if (auto it = absorbs_.find(id); it != absorbs_.end()) {
    const Node& add = graph_.node(it->second);
    bias = add.inputs[0] == out ? add.inputs[1] : add.inputs[0];
    out = add.outputs[0];
  }
  const auto io = bind_io(node.inputs[0], out, Layout::kPlain);
  if (!io) return false;
  std::uint32_t bias_id = kInvalid;
  if (bias != kNoValue) {
    const float* bias_data = float_data(graph_, bias);
    bias_id = define_static(std::vector<float>(bias_data, bias_data + n), {n});
    if (bias_id == kInvalid) return false;
  }
  const std::uint32_t filter_id = define_static(std::move(filter), {n, k});
  if (filter_id == kInvalid) return false;
  return check(
      xnn_define_fully_connected(subgraph(), kNoMin, kNoMax, io->x, filter_id, bias_id, io->y, 0),
      "fully connected");
}

std::uint32_t Builder::define_output(ValueId value, Layout layout) {
  const Dims dims = xnn_dims(shape(value), layout);
  std::uint32_t external = kInvalid;
  std::uint32_t flags = 0;
  if (auto it = output_index_.find(value); it != output_index_.end()) {
    ExternalValue& boundary = result_.outputs[it->second];
    boundary.layout = layout;
    external = boundary.id;
    flags = XNN_VALUE_FLAG_EXTERNAL_OUTPUT;
  }
  std::uint32_t id = kInvalid;
  if (!check(xnn_define_tensor_value(subgraph(), xnn_datatype_fp32, dims.size(), dims.data(),
                                     nullptr, external, flags, &id),
             "value")) {
    return kInvalid;
  }
  slots_[static_cast<std::size_t>(value)] = {id, layout};
  return id;
}

std::uint32_t Builder::define_internal(const Dims& dims) {
  std::uint32_t id = kInvalid;
  if (!check(xnn_define_tensor_value(subgraph(), xnn_datatype_fp32, dims.size(), dims.data(),
                                     nullptr, kInvalid, 0, &id),
             "value")) {
    return kInvalid;
  }
  return id;
}

std::uint32_t Builder::define_static(std::vector<float> data, const Dims& dims) {
  // XNNPACK may read up to XNN_EXTRA_BYTES past the end of static data.
  data.resize(data.size() + XNN_EXTRA_BYTES / sizeof(float), 0.0f);
  result_.static_data.push_back(std::move(data));
  std::uint32_t id = kInvalid;
  if (!check(xnn_define_tensor_value(subgraph(), xnn_datatype_fp32, dims.size(), dims.data(),
                                     result_.static_data.back().data(), kInvalid, 0, &id),
             "static value")) {
    return kInvalid;
  }
  return id;
}

std::uint32_t Builder::define_scalar(float value, std::size_t rank) {
  return define_static({value}, Dims(rank, 1));
}

std::uint32_t Builder::binary(BinaryDefine define, const char* what, std::uint32_t a,
                              std::uint32_t b, const Dims& dims) {
  if (a == kInvalid || b == kInvalid) return kInvalid;
  const std::uint32_t id = define_internal(dims);
  if (id == kInvalid || !check(define(subgraph(), kNoMin, kNoMax, a, b, id, 0), what)) {
    return kInvalid;
  }
  return id;
}

std::uint32_t Builder::sigmoid(std::uint32_t x, const Dims& dims) {
  if (x == kInvalid) return kInvalid;
  const std::uint32_t id = define_internal(dims);
  if (id == kInvalid || !check(xnn_define_sigmoid(subgraph(), x, id, 0), "sigmoid")) {
    return kInvalid;
  }
  return id;
}

std::uint32_t Builder::reshape(std::uint32_t source, const Dims& dims) {
  const std::uint32_t id = define_internal(dims);
  if (id == kInvalid) return kInvalid;
  if (!check(xnn_define_static_reshape(subgraph(), dims.size(), dims.data(), source, id, 0),
             "reshape")) {
    return kInvalid;
  }
  return id;
}

std::uint32_t Builder::pad_channels_last(std::uint32_t x, const Shape& x_shape,
                                         const Window2d& window, float value, std::int64_t bottom,
                                         std::int64_t right) {
  auto size = [](std::int64_t v) { return static_cast<std::size_t>(v); };
  const Dims padded_dims = {size(x_shape[0]), size(x_shape[2] + window.pad_top + bottom),
                            size(x_shape[3] + window.pad_left + right), size(x_shape[1])};
  const Dims pre = {0, size(window.pad_top), size(window.pad_left), 0};
  const Dims post = {0, size(bottom), size(right), 0};
  const std::uint32_t padded = define_internal(padded_dims);
  if (padded == kInvalid) return kInvalid;
  if (!check(
          xnn_define_static_constant_pad(subgraph(), pre.data(), post.data(), value, x, padded, 0),
          "constant pad")) {
    return kInvalid;
  }
  return padded;
}

std::uint32_t Builder::use(ValueId value, Layout layout) {
  const Slot& slot = slots_[static_cast<std::size_t>(value)];
  if (slot.id == kInvalid) {
    fail(fmt::format("value '{}' is read before it is computed", graph_.value(value).name));
    return kInvalid;
  }
  const Shape& value_shape = shape(value);
  if (value_shape.size() != 4 || slot.layout == layout) return slot.id;
  if (is_layout_constrained(graph_, value)) {
    fail(fmt::format("value '{}' is needed in two layouts", graph_.value(value).name));
    return kInvalid;
  }
  const auto key = std::make_pair(value, layout);
  if (auto it = converted_.find(key); it != converted_.end()) return it->second;
  const std::uint32_t id = reshape(slot.id, xnn_dims(value_shape, layout));
  if (id != kInvalid) converted_[key] = id;
  return id;
}

std::uint32_t Builder::use_in_logical_order(ValueId value) {
  const Slot& slot = slots_[static_cast<std::size_t>(value)];
  if (slot.id == kInvalid) {
    fail(fmt::format("value '{}' is read before it is computed", graph_.value(value).name));
    return kInvalid;
  }
  if (slot.layout == Layout::kChannelsLast && is_layout_constrained(graph_, value)) {
    fail(fmt::format("value '{}' is channels-last but read in NCHW order",
                     graph_.value(value).name));
    return kInvalid;
  }
  return slot.id;
}

std::uint32_t Builder::broadcast_operand(ValueId value, const Shape& out_shape, Layout layout) {
  const int rank = static_cast<int>(out_shape.size());
  const Shape aligned = pad_to_rank(shape(value), rank);
  const Layout aligned_layout = rank == 4 ? layout : Layout::kPlain;
  const Dims dims = xnn_dims(aligned, aligned_layout);
  if (graph_.value(value).is_constant()) {
    return define_static(constant_in_layout(float_data(graph_, value), aligned, aligned_layout),
                         dims);
  }
  if (static_cast<int>(shape(value).size()) == rank) return use(value, layout);
  if (aligned_layout == Layout::kChannelsLast && !is_layout_free(aligned)) {
    fail(fmt::format("value '{}' cannot be broadcast into a channels-last value",
                     graph_.value(value).name));
    return kInvalid;
  }
  const std::uint32_t source = use_in_logical_order(value);
  if (source == kInvalid) return kInvalid;
  return reshape(source, dims);
}

std::optional<Builder::Io> Builder::bind_io(ValueId in, ValueId out, Layout layout) {
  const std::uint32_t x = use(in, layout);
  if (x == kInvalid) return std::nullopt;
  const std::uint32_t y = define_output(out, layout);
  if (y == kInvalid) return std::nullopt;
  return Io{x, y, layout};
}

Layout Builder::follow_layout(ValueId in, ValueId out) const {
  if (is_layout_constrained(graph_, out)) return plan_.layout(out);
  const Slot& slot = slots_[static_cast<std::size_t>(in)];
  return shape(in).size() == 4 && slot.id != kInvalid ? slot.layout : Layout::kPlain;
}

bool Builder::check(xnn_status status, const char* what) {
  if (status == xnn_status_success) return true;
  if (current_ == nullptr)
    return fail(fmt::format("XNNPACK rejected the {}: {}", what, status_name(status)));
  return fail(fmt::format("XNNPACK rejected the {} of {} '{}': {}", what, current_->op_type,
                          current_->name, status_name(status)));
}

bool Builder::fail(std::string reason) {
  if (failure_.empty()) failure_ = std::move(reason);
  return false;
}

}  // namespace

const char* status_name(xnn_status status) {
  switch (status) {
    case xnn_status_success:
      return "success";
    case xnn_status_uninitialized:
      return "uninitialized";
    case xnn_status_invalid_parameter:
      return "invalid parameter";
    case xnn_status_invalid_state:
      return "invalid state";
    case xnn_status_unsupported_parameter:
      return "unsupported parameter";
    case xnn_status_unsupported_hardware:
      return "unsupported hardware";
    case xnn_status_out_of_memory:
      return "out of memory";
  }
  return "unknown status";
}

Result<BuiltSubgraph> build_subgraph(const Graph& partition) {
  auto plan = LayoutPlan::make(partition);
  if (!plan) return Failure{plan.error()};
  Builder builder(partition, *plan);
  return builder.build();
}

}  // namespace collage::xnnpack
