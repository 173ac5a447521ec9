#include "collage/backends/xnnpack/quantized.h"

#include <fmt/format.h>
#include <xnnpack.h>

#include <cmath>
#include <string_view>

#include "collage/backends/xnnpack/op_support.h"

namespace collage::xnnpack {
namespace {

bool in_default_domain(const Node& node) { return node.domain.empty() || node.domain == "ai.onnx"; }

// com.microsoft's quantized ops, or collage's QLinearHardSwish,
// QLinearHardSigmoid and QLinearConvTranspose.
bool in_quantized_op_domain(const Node& node) {
  return node.domain == "com.microsoft" || node.domain == "collage";
}

bool eight_bit_value(const Graph& graph, ValueId value) {
  return value != kNoValue && is_eight_bit(graph.type(value));
}

bool computed(const Graph& graph, ValueId value) {
  return value != kNoValue && !graph.value(value).is_constant();
}

// A value whose scale and zero point `node` gives: input or output `index`
// (outputs after inputs), with the inputs holding its scale and zero point.
struct Endpoint {
  ValueId value;
  std::size_t scale_input;
  std::size_t zero_input;
};

// The 8-bit values `node` reads or writes at a quantization it names; empty
// for ops that are not quantized ops.
std::vector<Endpoint> endpoints(const Node& node) {
  const std::string_view op = node.op_type;
  const ValueId out = node.outputs.empty() ? kNoValue : node.outputs[0];
  if (in_default_domain(node)) {
    if (op == "QuantizeLinear") return {{out, 1, 2}};
    if (op == "DequantizeLinear") return {{node.input(0), 1, 2}};
    if (op == "QLinearConv") return {{node.input(0), 1, 2}, {out, 6, 7}};
    if (op == "QLinearMatMul") return {{node.input(0), 1, 2}, {out, 6, 7}};
    return {};
  }
  if (!in_quantized_op_domain(node)) return {};
  if (op == "QLinearAdd" || op == "QLinearMul") {
    return {{node.input(0), 1, 2}, {node.input(3), 4, 5}, {out, 6, 7}};
  }
  if (op == "QLinearGlobalAveragePool" || op == "QLinearSigmoid" || op == "QLinearLeakyRelu" ||
      op == "QLinearHardSwish" || op == "QLinearHardSigmoid" || op == "QLinearAveragePool") {
    return {{node.input(0), 1, 2}, {out, 3, 4}};
  }
  if (op == "QGemm") return {{node.input(0), 1, 2}, {out, 7, 8}};
  if (op == "QLinearConvTranspose") return {{node.input(0), 1, 2}, {out, 6, 7}};
  return {};
}

// Whether every endpoint of `node` is an 8-bit value with a quantization.
bool endpoints_quantized(const Graph& graph, const Node& node) {
  for (const Endpoint& e : endpoints(node)) {
    if (!eight_bit_value(graph, e.value)) return false;
    if (!quantization_of(graph, node, e.scale_input, e.zero_input, e.value)) return false;
  }
  return true;
}

bool is_constant_int8(const Graph& graph, ValueId value) {
  return value != kNoValue && graph.value(value).is_constant() &&
         graph.type(value).dtype == DType::kInt8;
}

// Weight zero points: absent, or constant zeros.
bool zero_points_are_zero(const Graph& graph, const Node& node, std::size_t input) {
  if (node.input(input) == kNoValue) return true;
  const Tensor* zero = constant_at(graph, node, input);
  if (zero == nullptr) return false;
  for (std::int64_t i = 0; i < zero->numel(); ++i) {
    if (zero->number_at(i) != 0.0) return false;
  }
  return true;
}

// Positive finite weight scales: one, or `channels`.
bool weight_scales_fit(const Graph& graph, const Node& node, std::size_t input,
                       std::int64_t channels) {
  const Tensor* scale = constant_at(graph, node, input);
  if (scale == nullptr || (scale->numel() != 1 && scale->numel() != channels)) return false;
  for (std::int64_t i = 0; i < scale->numel(); ++i) {
    const double s = scale->number_at(i);
    if (!(s > 0.0) || !std::isfinite(s)) return false;
  }
  return true;
}

// An int32 bias [channels] (constant), or none at `input`.
bool bias_fits(const Graph& graph, const Node& node, std::size_t input, std::int64_t channels) {
  if (node.input(input) == kNoValue) return true;
  const TensorType& bias = graph.type(node.input(input));
  return constant_at(graph, node, input) != nullptr && bias.dtype == DType::kInt32 &&
         bias.shape == Shape{channels};
}

bool one_output(const Node& node) { return node.outputs.size() == 1; }

// Whether `node` takes int8 weights, which only this XNNPACK's signed kernels
// do (channel-wise, or a deconvolution's one scale).
bool has_int8_weights(const Node& node) {
  return node.op_type == "QLinearConv" || node.op_type == "QGemm" ||
         node.op_type == "QLinearMatMul" || node.op_type == "QLinearConvTranspose";
}

// Holds every 8-bit value of `partition` as quint8, unshifted, when all are
// uint8 and no op needs the signed kernels.
void keep_unsigned_values(const Graph& partition, std::vector<std::optional<Quantization>>& plan) {
  for (const Node& node : partition.nodes()) {
    if (has_int8_weights(node)) return;
  }
  for (const std::optional<Quantization>& q : plan) {
    if (q && !q->shifted) return;
  }
  for (std::optional<Quantization>& q : plan) {
    if (!q) continue;
    q->zero_point += 128;
    q->shifted = false;
    q->unsigned_storage = true;
  }
}

// The scale of endpoint value `value` of `node` (endpoints_quantized holds).
float scale_of(const Graph& graph, const Node& node, std::size_t scale_input, ValueId value) {
  return quantization_of(graph, node, scale_input, scale_input + 1, value)->scale;
}

// Whether `ratio` lies in [low, high), the range this XNNPACK's int8 operator
// creation accepts for a requantization scale (it fails the runtime otherwise).
bool ratio_within(float ratio, float low, float high) { return ratio >= low && ratio < high; }

// Whether every input_scale * weight_scale[m] / output_scale is one this
// XNNPACK's int8 convolutions requantize by (below 256).
bool requantization_fits(const Graph& graph, const Node& node, std::size_t weight_scale_input,
                         std::size_t output_scale_input, std::int64_t channels) {
  const float input = scale_of(graph, node, 1, node.input(0));
  const float output = scale_of(graph, node, output_scale_input, node.outputs[0]);
  for (float w :
       weight_scales(graph, node, weight_scale_input, static_cast<std::size_t>(channels))) {
    if (!ratio_within(input * w / output, 0x1.0p-32f, 256.0f)) return false;
  }
  return true;
}

}  // namespace

bool is_eight_bit(const TensorType& type) {
  return (type.dtype == DType::kInt8 || type.dtype == DType::kUInt8) &&
         type.rank() <= XNN_MAX_TENSOR_DIMS && type.numel() > 0;
}

const Tensor* constant_at(const Graph& graph, const Node& node, std::size_t i) {
  if (node.input(i) == kNoValue) return nullptr;
  const Value& value = graph.value(node.input(i));
  return value.is_constant() ? &*value.constant : nullptr;
}

std::optional<Quantization> quantization_of(const Graph& graph, const Node& node,
                                            std::size_t scale_input, std::size_t zero_input,
                                            ValueId value) {
  if (!eight_bit_value(graph, value)) return std::nullopt;
  const Tensor* scale = constant_at(graph, node, scale_input);
  if (scale == nullptr || scale->numel() != 1) return std::nullopt;
  const double s = scale->number_at(0);
  if (!(s > 0.0) || !std::isfinite(s)) return std::nullopt;
  const bool unsigned_value = graph.type(value).dtype == DType::kUInt8;
  double zero = 0.0;
  if (node.input(zero_input) != kNoValue) {
    const Tensor* z = constant_at(graph, node, zero_input);
    if (z == nullptr || z->numel() != 1 || z->dtype() != graph.type(value).dtype) {
      return std::nullopt;
    }
    zero = z->number_at(0);
  }
  Quantization q;
  q.scale = static_cast<float>(s);
  q.shifted = unsigned_value;
  q.zero_point = static_cast<std::int32_t>(zero) - (unsigned_value ? 128 : 0);
  return q;
}

Result<std::vector<std::optional<Quantization>>> plan_quantization(const Graph& partition) {
  std::vector<std::optional<Quantization>> plan(partition.num_values());
  auto give = [&](ValueId value, const Quantization& q) -> std::optional<std::string> {
    auto& slot = plan[static_cast<std::size_t>(value)];
    if (slot && *slot != q) {
      return fmt::format("value '{}' is read or written at two quantizations",
                         partition.value(value).name);
    }
    slot = q;
    return std::nullopt;
  };
  for (const Node& node : partition.nodes()) {
    for (const Endpoint& e : endpoints(node)) {
      auto q = quantization_of(partition, node, e.scale_input, e.zero_input, e.value);
      if (!q) {
        return Failure{fmt::format("{} '{}' has no constant quantization for '{}'", node.op_type,
                                   node.name, partition.value(e.value).name)};
      }
      if (auto why = give(e.value, *q)) return Failure{*why};
    }
  }
  // Pass-through ops (MaxPool, reshapes) keep the quantization: carry it
  // across them both ways until nothing changes; one between ops that give
  // its two sides different quantizations fails the partition.
  auto carry = [&] {
    for (bool changed = true; changed;) {
      changed = false;
      for (const Node& node : partition.nodes()) {
        if (!is_eight_bit_passthrough(partition, node)) continue;
        auto& in = plan[static_cast<std::size_t>(node.inputs[0])];
        auto& out = plan[static_cast<std::size_t>(node.outputs[0])];
        if (in && !out) {
          out = in;
          changed = true;
        } else if (out && !in) {
          in = out;
          changed = true;
        }
      }
    }
  };
  carry();
  for (const Node& node : partition.nodes()) {
    if (!is_eight_bit_passthrough(partition, node)) continue;
    if (plan[static_cast<std::size_t>(node.inputs[0])] !=
        plan[static_cast<std::size_t>(node.outputs[0])]) {
      return Failure{
          fmt::format("{} '{}' would requantize its 8-bit input", node.op_type, node.name)};
    }
  }
  // Values only pass-through ops touch (a MaxPool of 8-bit values on its
  // own) keep whatever they hold: any one quantization, shared, does.
  for (std::size_t v = 0; v < partition.num_values(); ++v) {
    const auto value = static_cast<ValueId>(v);
    if (!is_eight_bit(partition.type(value)) || plan[v] || partition.value(value).is_constant()) {
      continue;
    }
    const bool shifted = partition.type(value).dtype == DType::kUInt8;
    plan[v] = Quantization{1.0f, shifted ? -128 : 0, shifted};
    carry();
  }
  keep_unsigned_values(partition, plan);
  return plan;
}

bool is_quantize_or_dequantize(const Graph& graph, const Node& node) {
  if (!in_default_domain(node) || !one_output(node) || node.inputs.size() < 2) return false;
  const ValueId x = node.input(0);
  const ValueId y = node.outputs[0];
  // The float side: QuantizeLinear's input, DequantizeLinear's output.
  const ValueId real = node.op_type == "QuantizeLinear" ? x : y;
  if (!computed(graph, x) || graph.type(real).dtype != DType::kFloat32) return false;
  if (graph.type(x).shape != graph.type(y).shape || graph.type(x).numel() == 0) return false;
  return endpoints_quantized(graph, node);
}

namespace {

// Whether `node` (a QLinearConv or QLinearConvTranspose, by `transposed`)
// is 2-D with constant int8 weights of zero points 0 and `scales` weight
// scales (0: one per output channel), requantized within this XNNPACK's
// range, with an int32 bias or none.
bool quantized_convolution_fits(const Graph& graph, const Node& node, bool transposed,
                                std::int64_t scales) {
  if (!one_output(node)) return false;
  if (node.inputs.size() < 8 || node.inputs.size() > 9 || !computed(graph, node.input(0))) {
    return false;
  }
  if (!endpoints_quantized(graph, node) || !is_constant_int8(graph, node.input(3))) return false;
  const Shape& x = graph.type(node.input(0)).shape;
  const Shape& w = graph.type(node.input(3)).shape;
  const Shape& y = graph.type(node.outputs[0]).shape;
  if (x.size() != 4 || w.size() != 4 || y.size() != 4) return false;
  const std::int64_t group = node.attributes.get_int("group", 1);
  if (group < 1 || x[1] % group != 0) return false;
  // Conv weights are [M, C/g, kH, kW], ConvTranspose weights [C, M/g, kH, kW].
  const bool weights_fit = transposed ? w[0] == x[1] && w[1] * group == y[1]
                                      : w[1] * group == x[1] && w[0] == y[1] && w[0] % group == 0;
  if (!weights_fit) return false;
  const std::int64_t count = scales == 0 ? y[1] : scales;
  if (!weight_scales_fit(graph, node, 4, count) || !zero_points_are_zero(graph, node, 5)) {
    return false;
  }
  if (!requantization_fits(graph, node, 4, 6, count)) return false;
  return bias_fits(graph, node, 8, y[1]) && conv_window(graph, node).has_value();
}

}  // namespace

bool is_qlinear_conv(const Graph& graph, const Node& node) {
  return in_default_domain(node) && quantized_convolution_fits(graph, node, false, 0);
}

bool is_qlinear_conv_transpose(const Graph& graph, const Node& node) {
  // This XNNPACK's int8 deconvolution takes one weight scale.
  return node.domain == "collage" && quantized_convolution_fits(graph, node, true, 1);
}

bool is_qlinear_binary(const Graph& graph, const Node& node) {
  if (!in_quantized_op_domain(node) || !one_output(node) || node.inputs.size() != 8) return false;
  if (!endpoints_quantized(graph, node)) return false;
  const ValueId a = node.input(0);
  const ValueId b = node.input(3);
  if (!computed(graph, a) && !computed(graph, b)) return false;
  const float a_scale = scale_of(graph, node, 1, a);
  const float b_scale = scale_of(graph, node, 4, b);
  const float y_scale = scale_of(graph, node, 6, node.outputs[0]);
  if (node.op_type == "QLinearAdd") {
    if (!ratio_within(a_scale / y_scale, 0x1.0p-10f, 0x1.0p+8f) ||
        !ratio_within(b_scale / y_scale, 0x1.0p-10f, 0x1.0p+8f)) {
      return false;
    }
  } else if (!ratio_within(a_scale * b_scale / y_scale, 0x1.0p-16f, 0x1.0p+8f)) {
    return false;
  }
  const Shape& out = graph.type(node.outputs[0]).shape;
  for (ValueId input : {a, b}) {
    const Shape& shape = graph.type(input).shape;
    if (shape.size() > out.size()) return false;
    const Shape padded = pad_to_rank(shape, static_cast<int>(out.size()));
    for (std::size_t d = 0; d < out.size(); ++d) {
      if (padded[d] != out[d] && padded[d] != 1) return false;
    }
  }
  return true;
}

bool is_qlinear_global_average_pool(const Graph& graph, const Node& node) {
  if (!in_quantized_op_domain(node) || !one_output(node) || node.inputs.size() != 5) return false;
  if (!computed(graph, node.input(0)) || !endpoints_quantized(graph, node)) return false;
  if (node.attributes.get_int("channels_last", 0) != 0) return false;
  const float ratio =
      scale_of(graph, node, 1, node.input(0)) / scale_of(graph, node, 3, node.outputs[0]);
  if (!ratio_within(ratio, 0x1.0p-8f, 0x1.0p+8f)) return false;
  const Shape& x = graph.type(node.input(0)).shape;
  return x.size() == 4 && graph.type(node.outputs[0]).shape == Shape{x[0], x[1], 1, 1};
}

bool is_qlinear_unary(const Graph& graph, const Node& node) {
  if (!in_quantized_op_domain(node) || !one_output(node) || node.inputs.size() != 5) return false;
  if (!computed(graph, node.input(0)) || !endpoints_quantized(graph, node)) return false;
  if (graph.type(node.input(0)).shape != graph.type(node.outputs[0]).shape) return false;
  return node.op_type != "QLinearLeakyRelu" ||
         std::isfinite(node.attributes.get_float("alpha", 0.01f));
}

bool is_qlinear_average_pool(const Graph& graph, const Node& node) {
  if (!in_quantized_op_domain(node) || !one_output(node) || node.inputs.size() != 5) return false;
  if (!computed(graph, node.input(0)) || !endpoints_quantized(graph, node)) return false;
  if (node.attributes.get_int("channels_last", 0) != 0) return false;
  const Shape& x = graph.type(node.input(0)).shape;
  const Shape& y = graph.type(node.outputs[0]).shape;
  if (x.size() != 4 || y.size() != 4 || y[0] != x[0] || y[1] != x[1]) return false;
  return pool_window(graph, node).has_value();
}

bool int8_sigmoid_writes(const Quantization& y) {
  const std::int32_t zero = y.unsigned_storage ? 0 : -128;
  return y.scale == 1.0f / 256.0f && y.zero_point == zero;
}

bool is_qlinear_matmul(const Graph& graph, const Node& node) {
  if (!one_output(node) || !computed(graph, node.input(0))) return false;
  const bool gemm = in_quantized_op_domain(node) && node.op_type == "QGemm";
  const bool matmul = in_default_domain(node) && node.op_type == "QLinearMatMul";
  if (!gemm && !matmul) return false;
  if (matmul && node.inputs.size() != 8) return false;
  if (gemm && (node.inputs.size() != 9 || node.input(7) == kNoValue)) return false;
  if (!endpoints_quantized(graph, node) || !is_constant_int8(graph, node.input(3))) return false;
  const Shape& a = graph.type(node.input(0)).shape;
  const Shape& b = graph.type(node.input(3)).shape;
  if (a.size() != 2 || b.size() != 2) return false;
  bool trans_b = false;
  if (gemm) {
    if (node.attributes.get_int("transA", 0) != 0) return false;
    if (node.attributes.get_float("alpha", 1.0f) != 1.0f) return false;
    trans_b = node.attributes.get_int("transB", 0) != 0;
  }
  const std::int64_t k = trans_b ? b[1] : b[0];
  const std::int64_t n = trans_b ? b[0] : b[1];
  if (a[1] != k || graph.type(node.outputs[0]).shape != Shape{a[0], n}) return false;
  if (!weight_scales_fit(graph, node, 4, n) || !zero_points_are_zero(graph, node, 5)) return false;
  if (!requantization_fits(graph, node, 4, gemm ? 7 : 6, n)) return false;
  return !gemm || bias_fits(graph, node, 6, n);
}

bool is_eight_bit_passthrough(const Graph& graph, const Node& node) {
  if (!in_default_domain(node) || !one_output(node) || node.inputs.empty()) return false;
  const ValueId x = node.input(0);
  const ValueId y = node.outputs[0];
  if (!computed(graph, x) || !eight_bit_value(graph, x) || !eight_bit_value(graph, y)) return false;
  if (graph.type(x).dtype != graph.type(y).dtype) return false;
  const std::string_view op = node.op_type;
  if (op == "MaxPool") return node.inputs.size() == 1 && graph.type(x).rank() == 4;
  if (op == "Resize") return is_resize(graph, node);
  return op == "Flatten" || op == "Reshape" || op == "Squeeze" || op == "Unsqueeze";
}

bool is_other_domain_quantized_op(const Node& node) {
  const std::string_view op_type = node.op_type;
  if (node.domain == "collage") {
    return op_type == "QLinearHardSwish" || op_type == "QLinearHardSigmoid" ||
           op_type == "QLinearConvTranspose";
  }
  return node.domain == "com.microsoft" &&
         (op_type == "QLinearAdd" || op_type == "QLinearMul" ||
          op_type == "QLinearGlobalAveragePool" || op_type == "QLinearSigmoid" ||
          op_type == "QLinearLeakyRelu" || op_type == "QLinearAveragePool" || op_type == "QGemm");
}

std::vector<float> weight_scales(const Graph& graph, const Node& node, std::size_t scale_input,
                                 std::size_t channels) {
  const Tensor* scale = constant_at(graph, node, scale_input);
  std::vector<float> scales(channels);
  for (std::size_t m = 0; m < channels; ++m) {
    const auto i = scale->numel() == 1 ? 0 : static_cast<std::int64_t>(m);
    scales[m] = static_cast<float>(scale->number_at(i));
  }
  return scales;
}

}  // namespace collage::xnnpack
