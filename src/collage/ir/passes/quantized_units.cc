#include "collage/ir/passes/quantized_units.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "collage/ir/passes/rewrite_util.h"

namespace collage {
namespace {

bool is_eight_bit(DType dtype) { return dtype == DType::kInt8 || dtype == DType::kUInt8; }

// The constant behind `value`, or nullptr (also for kNoValue).
const Tensor* constant_of(const Graph& graph, ValueId value) {
  if (value == kNoValue || !graph.value(value).is_constant()) return nullptr;
  return &*graph.value(value).constant;
}

// A one-element constant's value; 0 for an absent zero point.
std::optional<double> zero_point_of(const Graph& graph, ValueId value) {
  if (value == kNoValue) return 0.0;
  const Tensor* tensor = constant_of(graph, value);
  if (tensor == nullptr || tensor->numel() != 1) return std::nullopt;
  return tensor->number_at(0);
}

// The parameters of a DequantizeLinear (x, scale, zero point) with constant
// scale and zero point; nullopt when they are not constants.
struct Dequantize {
  ValueId data = kNoValue;
  ValueId scale = kNoValue;
  ValueId zero_point = kNoValue;  // kNoValue when the node leaves it out
  const Tensor* scales = nullptr;
  std::int64_t axis = 1;
};

std::optional<Dequantize> dequantize_of(const Graph& graph, ValueId value) {
  const Node* node = made_by(graph, value, "DequantizeLinear");
  if (node == nullptr || node->inputs.size() < 2) return std::nullopt;
  Dequantize dq;
  dq.data = node->input(0);
  dq.scale = node->input(1);
  dq.zero_point = node->inputs.size() > 2 ? node->input(2) : kNoValue;
  dq.scales = constant_of(graph, dq.scale);
  dq.axis = node->attributes.get_int("axis", 1);
  if (dq.scales == nullptr || dq.scales->dtype() != DType::kFloat32) return std::nullopt;
  if (dq.zero_point != kNoValue && constant_of(graph, dq.zero_point) == nullptr) {
    return std::nullopt;
  }
  return dq;
}

// A scalar zero constant of `dtype`, for a zero point the QDQ spelling left out.
ValueId zero_constant(Graph& graph, DType dtype, const std::string& name) {
  return graph.add_constant(unused_value_name(graph, name), Tensor::zeros(TensorType{dtype, {}}));
}

// Whether `activation` (a Relu or Clip) between an op and the
// QuantizeLinear with scale `y_scale` and zero point `y_zero` of `y_type`
// changes nothing the quantization does not do anyway: quantizing clamps
// to [q(low), q(high)] when those reach the type's ends.
bool absorbed_by_quantization(const Graph& graph, const Node& activation, double y_scale,
                              double y_zero, DType y_type) {
  const double lowest = y_type == DType::kInt8 ? -128.0 : 0.0;
  const double highest = y_type == DType::kInt8 ? 127.0 : 255.0;
  auto quantized = [&](double v) { return std::nearbyint(v / y_scale) + y_zero; };
  if (is_onnx_op(activation, "Relu")) return quantized(0.0) <= lowest;
  if (!is_onnx_op(activation, "Clip")) return false;
  for (std::size_t i = 1; i < activation.inputs.size(); ++i) {
    const ValueId bound = activation.input(i);
    if (bound == kNoValue) continue;
    const std::optional<double> value = scalar_constant(graph, bound);
    if (!value) return false;
    if (i == 1 ? quantized(*value) > lowest : quantized(*value) < highest) return false;
  }
  return true;
}

}  // namespace

namespace {

// The float op a unit is made of and the quantized op it becomes.
struct ProductKind {
  const char* op;         // "Conv", "ConvTranspose", "MatMul" or "Gemm"
  const char* quantized;  // "QLinearConv", collage "QLinearConvTranspose", "QLinearMatMul" or
                          // com.microsoft "QGemm"
  const char* domain;
  bool takes_bias;
  // The weights' axis that holds one scale per output channel (or column);
  // a Gemm's is 0 with transB, else 1. A ConvTranspose's weights [C, M/g,
  // k...] hold one per output channel of a group, shared by the groups.
  std::int64_t weight_axis;
};
constexpr ProductKind kConvolution = {"Conv", "QLinearConv", "", true, 0};
constexpr ProductKind kConvTranspose = {"ConvTranspose", "QLinearConvTranspose", "collage", true,
                                        1};
constexpr ProductKind kMatMul = {"MatMul", "QLinearMatMul", "", false, 1};
constexpr ProductKind kGemm = {"Gemm", "QGemm", "com.microsoft", true, 1};

bool is_gemm(const ProductKind& kind) { return std::string_view(kind.op) == "Gemm"; }
bool is_transposed(const ProductKind& kind) { return std::string_view(kind.op) == "ConvTranspose"; }

int fuse_quantized_products(Graph& graph, const ProductKind& kind) {
  const ValueUsers users(graph);
  std::vector<NodeId> doomed;
  int fused = 0;
  for (std::size_t n = 0; n < graph.num_nodes(); ++n) {
    const Node& quantize = graph.node(static_cast<NodeId>(n));
    if (!is_onnx_op(quantize, "QuantizeLinear") || quantize.inputs.size() < 2 ||
        quantize.outputs.size() != 1) {
      continue;
    }
    const DType y_type = graph.type(quantize.outputs[0]).dtype;
    const Tensor* y_scale = constant_of(graph, quantize.input(1));
    const ValueId y_zero_value = quantize.inputs.size() > 2 ? quantize.input(2) : kNoValue;
    const std::optional<double> y_zero = zero_point_of(graph, y_zero_value);
    if (!is_eight_bit(y_type) || y_scale == nullptr || y_scale->numel() != 1 || !y_zero) continue;

    // Conv, or Conv then a Relu or Clip the quantization absorbs, read
    // only by this QuantizeLinear.
    ValueId conv_out = quantize.input(0);
    NodeId relu_id = kNoNode;
    if (const Node* activation = producer_of(graph, conv_out);
        activation != nullptr &&
        (is_onnx_op(*activation, "Relu") || is_onnx_op(*activation, "Clip"))) {
      if (!users.only_by_one_node(conv_out) ||
          !absorbed_by_quantization(graph, *activation, y_scale->number_at(0), *y_zero, y_type)) {
        continue;
      }
      relu_id = graph.value(conv_out).producer;
      conv_out = activation->input(0);
    }
    const Node* conv = made_by(graph, conv_out, kind.op);
    if (conv == nullptr || !users.only_by_one_node(conv_out) || conv->inputs.size() < 2) continue;
    // QGemm has Gemm's alpha, transA and transB, but adds C as it is.
    if (is_gemm(kind) && conv->inputs.size() > 2 && conv->input(2) != kNoValue &&
        conv->attributes.get_float("beta", 1.0f) != 1.0f) {
      continue;
    }
    const std::int64_t weight_axis =
        is_gemm(kind) ? (conv->attributes.get_int("transB", 0) != 0 ? 0 : 1) : kind.weight_axis;
    // Output channels: a convolution's axis 1, a product's last axis (its
    // weights must be a matrix).
    const Shape& out_shape = graph.type(conv_out).shape;
    const bool matmul = !kind.takes_bias;
    if (matmul && (graph.type(conv->input(1)).rank() != 2 || out_shape.empty())) continue;
    const std::int64_t out_channels =
        matmul ? out_shape.back() : (out_shape.size() > 1 ? out_shape[1] : -1);

    // The input: one scale and zero point.
    const std::optional<Dequantize> x = dequantize_of(graph, conv->input(0));
    if (!x || x->scales->numel() != 1 || !is_eight_bit(graph.type(x->data).dtype)) continue;
    const std::optional<double> x_zero = zero_point_of(graph, x->zero_point);
    if (!x_zero) continue;
    // The weights: constant 8-bit values, one scale or one per output
    // channel (axis 0), zero points to match.
    const std::optional<Dequantize> w = dequantize_of(graph, conv->input(1));
    if (!w || constant_of(graph, w->data) == nullptr || !is_eight_bit(graph.type(w->data).dtype)) {
      continue;
    }
    const std::int64_t w_count = w->scales->numel();
    const Shape& w_shape = graph.type(w->data).shape;
    const std::int64_t w_axis = w->axis < 0 ? w->axis + graph.type(w->data).rank() : w->axis;
    // Output channel m's scale: entry m, or a ConvTranspose's m mod M/g.
    const std::int64_t w_channels =
        is_transposed(kind) ? (w_shape.size() > 1 ? w_shape[1] : -1) : out_channels;
    if (w_count != 1 && (w_count != w_channels || w_axis != weight_axis)) continue;
    if (w->zero_point != kNoValue && constant_of(graph, w->zero_point)->numel() != w_count) {
      continue;
    }

    // The bias, as int32 sums at the scale x_scale * w_scale[m].
    const float xs = x->scales->data<float>()[0];
    auto sums_scale = [&](std::int64_t m) {
      return static_cast<double>(xs) *
             static_cast<double>(w->scales->data<float>()[w_count == 1 ? 0 : m % w_channels]);
    };
    ValueId bias = kNoValue;
    std::optional<Tensor> rounded_bias;
    if (kind.takes_bias && conv->inputs.size() > 2 && conv->input(2) != kNoValue) {
      const ValueId b = conv->input(2);
      if (graph.type(b).shape != Shape{out_channels}) continue;
      if (std::optional<Dequantize> dq = dequantize_of(graph, b)) {
        // An int32 bias at the sums' scale is taken as it is.
        const Tensor* values = constant_of(graph, dq->data);
        const Tensor* zeros = constant_of(graph, dq->zero_point);
        bool fits = values != nullptr && values->dtype() == DType::kInt32 &&
                    (dq->scales->numel() == 1 || dq->scales->numel() == out_channels);
        for (std::int64_t i = 0; fits && zeros != nullptr && i < zeros->numel(); ++i) {
          fits = zeros->number_at(i) == 0.0;
        }
        for (std::int64_t m = 0; fits && m < out_channels; ++m) {
          const double scale = dq->scales->data<float>()[dq->scales->numel() == 1 ? 0 : m];
          fits = std::abs(scale - sums_scale(m)) <= 1e-6 * sums_scale(m);
        }
        if (!fits) continue;
        bias = dq->data;
      } else if (const Tensor* values = float_constant(graph, b)) {
        Tensor sums = Tensor::allocate(TensorType{DType::kInt32, {out_channels}});
        constexpr double kLow = std::numeric_limits<std::int32_t>::min();
        constexpr double kHigh = std::numeric_limits<std::int32_t>::max();
        for (std::int64_t m = 0; m < out_channels; ++m) {
          const double q = std::nearbyint(values->data<float>()[m] / sums_scale(m));
          sums.data<std::int32_t>()[m] = static_cast<std::int32_t>(std::clamp(q, kLow, kHigh));
        }
        rounded_bias = std::move(sums);
      } else {
        continue;
      }
    }

    // Everything matched: the QuantizeLinear becomes the quantized op (it
    // writes the unit's output after every value the unit reads).
    const NodeId conv_id = graph.value(conv_out).producer;
    Attributes attributes = conv->attributes;
    if (is_gemm(kind)) attributes.erase("beta");
    const std::string name = graph.value(conv_out).name;
    const ValueId x_zero_value =
        x->zero_point != kNoValue
            ? x->zero_point
            : zero_constant(graph, graph.type(x->data).dtype, name + "_x_zero_point");
    const ValueId w_zero_value =
        w->zero_point != kNoValue
            ? w->zero_point
            : zero_constant(graph, graph.type(w->data).dtype, name + "_w_zero_point");
    const ValueId y_zero_id = y_zero_value != kNoValue
                                  ? y_zero_value
                                  : zero_constant(graph, y_type, name + "_y_zero_point");
    if (rounded_bias) {
      bias = graph.add_constant(unused_value_name(graph, name + "_bias_int32"), *rounded_bias);
    }
    const ValueId y_scale_id = graph.node(static_cast<NodeId>(n)).input(1);
    std::vector<ValueId> inputs = {x->data, x->scale, x_zero_value,
                                   w->data, w->scale, w_zero_value};
    if (is_gemm(kind)) {
      // QGemm: A, a_scale, a_zero_point, B, b_scale, b_zero_point, C, y_scale, y_zero_point.
      inputs.insert(inputs.end(), {bias, y_scale_id, y_zero_id});
    } else {
      inputs.insert(inputs.end(), {y_scale_id, y_zero_id});
      if (bias != kNoValue) inputs.push_back(bias);
    }
    Node& unit = graph.node(static_cast<NodeId>(n));
    unit.op_type = kind.quantized;
    unit.domain = kind.domain;
    unit.inputs = std::move(inputs);
    unit.attributes = attributes;
    doomed.push_back(conv_id);
    if (relu_id != kNoNode) doomed.push_back(relu_id);
    ++fused;
  }
  if (fused == 0) return 0;
  if (!std::string_view(kind.domain).empty()) graph.other_opsets.emplace(kind.domain, 1);
  graph.erase_nodes(doomed);
  graph.prune();
  return fused;
}

}  // namespace

int fuse_quantized_gemms(Graph& graph) { return fuse_quantized_products(graph, kGemm); }

int fuse_quantized_convolutions(Graph& graph) {
  return fuse_quantized_products(graph, kConvolution);
}

int fuse_quantized_conv_transposes(Graph& graph) {
  return fuse_quantized_products(graph, kConvTranspose);
}

int fuse_quantized_matmuls(Graph& graph) { return fuse_quantized_products(graph, kMatMul); }

namespace {

// The QuantizeLinear reading `value` as its only reader, with one constant
// scale and zero point; nullptr otherwise.
const Node* only_quantized_by(const Graph& graph, const ValueUsers& users, ValueId value) {
  if (!users.only_by_one_node(value)) return nullptr;
  const Node& reader = graph.node(users.of(value)[0]);
  if (!is_onnx_op(reader, "QuantizeLinear") || reader.inputs.size() < 2 ||
      reader.input(0) != value) {
    return nullptr;
  }
  const Tensor* scale = constant_of(graph, reader.input(1));
  const ValueId zero = reader.inputs.size() > 2 ? reader.input(2) : kNoValue;
  if (scale == nullptr || scale->numel() != 1 || !zero_point_of(graph, zero)) return nullptr;
  return &reader;
}

// Whether a DequantizeLinear with one scale and zero point and a
// QuantizeLinear (only_quantized_by) use the same ones.
bool same_parameters(const Graph& graph, const Dequantize& dq, const Node& q) {
  const ValueId q_zero = q.inputs.size() > 2 ? q.input(2) : kNoValue;
  return dq.scales->numel() == 1 &&
         dq.scales->data<float>()[0] == constant_of(graph, q.input(1))->data<float>()[0] &&
         zero_point_of(graph, dq.zero_point) == zero_point_of(graph, q_zero) &&
         graph.type(dq.data).dtype == graph.type(q.outputs[0]).dtype;
}

bool moves_values(const Graph& graph, const Node& node) {
  for (const char* op : {"MaxPool", "Reshape", "Flatten", "Transpose", "Squeeze", "Unsqueeze"}) {
    if (is_onnx_op(node, op)) return true;
  }
  // A Resize's weights sum to 1: it commutes with the pair's affine map
  // (tf_crop_and_resize's extrapolation value, a real number, does not).
  return is_onnx_op(node, "Resize") && graph.opset >= 11 &&
         node.attributes.get_string("coordinate_transformation_mode", "half_pixel") !=
             "tf_crop_and_resize";
}

}  // namespace

int move_quantized_values(Graph& graph) {
  const ValueUsers users(graph);
  std::vector<NodeId> doomed;
  for (std::size_t n = 0; n < graph.num_nodes(); ++n) {
    const Node& op = graph.node(static_cast<NodeId>(n));
    if (!moves_values(graph, op) || op.inputs.empty() || op.outputs.size() != 1) continue;
    const std::optional<Dequantize> dq = dequantize_of(graph, op.input(0));
    if (!dq || !zero_point_of(graph, dq->zero_point) || !users.only_by_one_node(op.input(0))) {
      continue;
    }
    const Node* q = only_quantized_by(graph, users, op.outputs[0]);
    if (q == nullptr || !same_parameters(graph, *dq, *q)) continue;
    // The op reads the quantized values and writes the QuantizeLinear's
    // output; the QuantizeLinear goes.
    const ValueId quantized_out = q->outputs[0];
    doomed.push_back(graph.value(quantized_out).producer);
    Node& moved = graph.node(static_cast<NodeId>(n));
    moved.inputs[0] = dq->data;
    moved.outputs[0] = quantized_out;
  }
  if (doomed.empty()) return 0;
  graph.erase_nodes(doomed);
  graph.sort_topologically();
  graph.prune();
  return static_cast<int>(doomed.size());
}

namespace {

// DequantizeLinear(a), DequantizeLinear(b) -> `op` [-> Relu/Clip] ->
// QuantizeLinear as the com.microsoft `fused_op` (QLinearAdd, QLinearMul).
int fuse_quantized_binaries(Graph& graph, const char* op, const char* fused_op) {
  const ValueUsers users(graph);
  std::vector<NodeId> doomed;
  int fused_count = 0;
  for (std::size_t n = 0; n < graph.num_nodes(); ++n) {
    const Node& add = graph.node(static_cast<NodeId>(n));
    if (!is_onnx_op(add, op) || add.inputs.size() != 2 || add.outputs.size() != 1) continue;
    const std::optional<Dequantize> a = dequantize_of(graph, add.input(0));
    const std::optional<Dequantize> b = dequantize_of(graph, add.input(1));
    if (!a || !b || a->scales->numel() != 1 || b->scales->numel() != 1) continue;
    const DType type = graph.type(a->data).dtype;
    if (!is_eight_bit(type) || graph.type(b->data).dtype != type) continue;
    ValueId sum = add.outputs[0];
    NodeId relu_id = kNoNode;
    const Node* q = only_quantized_by(graph, users, sum);
    if (q == nullptr && users.only_by_one_node(sum)) {
      const Node& reader = graph.node(users.of(sum)[0]);
      if ((is_onnx_op(reader, "Relu") || is_onnx_op(reader, "Clip")) &&
          reader.outputs.size() == 1) {
        q = only_quantized_by(graph, users, reader.outputs[0]);
        const ValueId zero = q != nullptr && q->inputs.size() > 2 ? q->input(2) : kNoValue;
        if (q != nullptr &&
            !absorbed_by_quantization(graph, reader, constant_of(graph, q->input(1))->number_at(0),
                                      *zero_point_of(graph, zero), type)) {
          q = nullptr;
        }
        relu_id = users.of(sum)[0];
      }
    }
    if (q == nullptr || graph.type(q->outputs[0]).dtype != type) continue;
    const ValueId out = q->outputs[0];
    const ValueId y_scale = q->input(1);
    const ValueId y_zero = q->inputs.size() > 2 ? q->input(2) : kNoValue;
    const NodeId q_id = graph.value(out).producer;
    // The op becomes the quantized one writing the QuantizeLinear's output.
    Node& fused = graph.node(static_cast<NodeId>(n));
    fused.op_type = fused_op;
    fused.domain = "com.microsoft";
    fused.inputs = {a->data,  a->scale,      a->zero_point, b->data,
                    b->scale, b->zero_point, y_scale,       y_zero};
    fused.outputs = {out};
    fused.attributes = {};
    doomed.push_back(q_id);
    if (relu_id != kNoNode) doomed.push_back(relu_id);
    ++fused_count;
  }
  if (doomed.empty()) return 0;
  graph.other_opsets.emplace("com.microsoft", 1);
  graph.erase_nodes(doomed);
  graph.sort_topologically();
  graph.prune();
  return fused_count;
}

// Whether an AveragePool is one com.microsoft QLinearAveragePool can be:
// rank 3 to 5, a kernel shape, no dilation (which it lacks), and
// count_include_pad 0 or 1.
bool plain_average_pool(const Graph& graph, const Node& node) {
  const int rank = graph.type(node.input(0)).rank();
  const auto& attributes = node.attributes.all();
  if (rank < 3 || rank > 5 || attributes.find("kernel_shape") == attributes.end()) return false;
  const std::int64_t include_pad = node.attributes.get_int("count_include_pad", 0);
  if (include_pad != 0 && include_pad != 1) return false;
  const auto dilations = attributes.find("dilations");
  if (dilations == attributes.end()) return true;
  const auto* values = std::get_if<std::vector<std::int64_t>>(&dilations->second);
  return values != nullptr &&
         std::all_of(values->begin(), values->end(), [](std::int64_t d) { return d == 1; });
}

// A quantized op: its domain and type.
struct QuantizedOp {
  const char* domain;
  const char* op_type;
};

// The quantized op of a float op that reads one value and writes one (a
// com.microsoft one, or collage's QLinearHardSwish or QLinearHardSigmoid,
// which ONNX Runtime lacks); nullopt for another op, or one its quantized op
// cannot be.
std::optional<QuantizedOp> quantized_unary(const Graph& graph, const Node& node) {
  if (is_onnx_op(node, "Sigmoid")) return QuantizedOp{"com.microsoft", "QLinearSigmoid"};
  if (is_onnx_op(node, "LeakyRelu")) return QuantizedOp{"com.microsoft", "QLinearLeakyRelu"};
  if (is_onnx_op(node, "HardSwish")) return QuantizedOp{"collage", "QLinearHardSwish"};
  if (is_onnx_op(node, "HardSigmoid")) return QuantizedOp{"collage", "QLinearHardSigmoid"};
  if (is_onnx_op(node, "Softmax")) return QuantizedOp{"com.microsoft", "QLinearSoftmax"};
  if (is_onnx_op(node, "GlobalAveragePool") && graph.type(node.input(0)).rank() >= 3) {
    return QuantizedOp{"com.microsoft", "QLinearGlobalAveragePool"};
  }
  if (is_onnx_op(node, "AveragePool") && plain_average_pool(graph, node)) {
    return QuantizedOp{"com.microsoft", "QLinearAveragePool"};
  }
  return std::nullopt;
}

}  // namespace

int fuse_quantized_adds(Graph& graph) {
  return fuse_quantized_binaries(graph, "Add", "QLinearAdd");
}

int fuse_quantized_muls(Graph& graph) {
  return fuse_quantized_binaries(graph, "Mul", "QLinearMul");
}

int fuse_quantized_unaries(Graph& graph) {
  const ValueUsers users(graph);
  std::vector<NodeId> doomed;
  for (std::size_t n = 0; n < graph.num_nodes(); ++n) {
    const Node& op = graph.node(static_cast<NodeId>(n));
    if (op.inputs.size() != 1 || op.outputs.size() != 1) continue;
    const std::optional<QuantizedOp> fused_op = quantized_unary(graph, op);
    if (!fused_op) continue;
    const std::optional<Dequantize> dq = dequantize_of(graph, op.input(0));
    if (!dq || dq->scales->numel() != 1 || !is_eight_bit(graph.type(dq->data).dtype)) continue;
    const Node* q = only_quantized_by(graph, users, op.outputs[0]);
    if (q == nullptr || !is_eight_bit(graph.type(q->outputs[0]).dtype)) continue;
    const ValueId out = q->outputs[0];
    doomed.push_back(graph.value(out).producer);
    const ValueId y_scale = q->input(1);
    const ValueId y_zero = q->inputs.size() > 2 ? q->input(2) : kNoValue;
    // The op becomes the quantized one writing the QuantizeLinear's output;
    // its attributes (LeakyRelu's alpha, the pooling window) carry over.
    Node& fused = graph.node(static_cast<NodeId>(n));
    fused.op_type = fused_op->op_type;
    fused.domain = fused_op->domain;
    graph.other_opsets.emplace(fused.domain, 1);
    fused.inputs = {dq->data, dq->scale, dq->zero_point, y_scale, y_zero};
    fused.outputs = {out};
    // What a QLinearSoftmax's axis means depends on its Softmax's opset.
    if (fused.op_type == "QLinearSoftmax") {
      fused.attributes.set("opset", static_cast<std::int64_t>(graph.opset));
    }
  }
  if (doomed.empty()) return 0;
  graph.erase_nodes(doomed);
  graph.sort_topologically();
  graph.prune();
  return static_cast<int>(doomed.size());
}

int fuse_quantized_concats(Graph& graph) {
  const ValueUsers users(graph);
  std::vector<NodeId> doomed;
  int fused_count = 0;
  for (std::size_t n = 0; n < graph.num_nodes(); ++n) {
    const Node& concat = graph.node(static_cast<NodeId>(n));
    if (!is_onnx_op(concat, "Concat") || concat.inputs.empty() || concat.outputs.size() != 1) {
      continue;
    }
    const Node* q = only_quantized_by(graph, users, concat.outputs[0]);
    if (q == nullptr) continue;
    const DType type = graph.type(q->outputs[0]).dtype;
    std::vector<ValueId> inputs = {q->input(1), q->inputs.size() > 2 ? q->input(2) : kNoValue};
    bool all_quantized = is_eight_bit(type);
    for (ValueId input : concat.inputs) {
      const std::optional<Dequantize> dq = dequantize_of(graph, input);
      if (!all_quantized || !dq || dq->scales->numel() != 1 || graph.type(dq->data).dtype != type) {
        all_quantized = false;
        break;
      }
      inputs.insert(inputs.end(), {dq->data, dq->scale, dq->zero_point});
    }
    if (!all_quantized) continue;
    const ValueId out = q->outputs[0];
    const NodeId q_id = graph.value(out).producer;
    // The Concat becomes the QLinearConcat writing the QuantizeLinear's output.
    Node& fused = graph.node(static_cast<NodeId>(n));
    fused.op_type = "QLinearConcat";
    fused.domain = "com.microsoft";
    fused.inputs = std::move(inputs);
    fused.outputs = {out};
    doomed.push_back(q_id);
    ++fused_count;
  }
  if (doomed.empty()) return 0;
  graph.other_opsets.emplace("com.microsoft", 1);
  graph.erase_nodes(doomed);
  graph.sort_topologically();
  graph.prune();
  return fused_count;
}

}  // namespace collage
