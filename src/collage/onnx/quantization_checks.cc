#include "collage/onnx/quantization_checks.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "collage/ir/error.h"

namespace collage {
namespace {

// Where the scale of an operand may vary.
enum class Spread {
  kOne,        // one value for the whole tensor
  kAxis,       // one value, or one per index of the node's `axis` (default 1)
  kFirstAxis,  // one value, or one per index of axis 0 (convolution weights)
  kUnchecked,  // the kernel checks the length (per row or per column)
};

// One quantized operand of a node: its data (an input index, or kOutput for
// the node's output 0), its scale and zero point inputs (kNone when the op
// has none).
constexpr int kOutput = -1;
constexpr int kNone = -2;
struct Operand {
  int data;
  int scale;
  int zero_point;
  Spread spread;
};

std::vector<Operand> operands_of(const Node& node) {
  const std::string& op = node.op_type;
  if (node.domain.empty()) {
    if (op == "QuantizeLinear") return {{kOutput, 1, 2, Spread::kAxis}};
    if (op == "DequantizeLinear") return {{0, 1, 2, Spread::kAxis}};
    if (op == "QLinearConv") {
      return {
          {0, 1, 2, Spread::kOne}, {3, 4, 5, Spread::kFirstAxis}, {kOutput, 6, 7, Spread::kOne}};
    }
    if (op == "QLinearMatMul") {
      return {{0, 1, 2, Spread::kUnchecked},
              {3, 4, 5, Spread::kUnchecked},
              {kOutput, 6, 7, Spread::kOne}};
    }
    if (op == "ConvInteger")
      return {{0, kNone, 2, Spread::kOne}, {1, kNone, 3, Spread::kFirstAxis}};
    if (op == "MatMulInteger") {
      return {{0, kNone, 2, Spread::kUnchecked}, {1, kNone, 3, Spread::kUnchecked}};
    }
    return {};
  }
  if (node.domain != "com.microsoft") return {};
  if (op == "QLinearAdd" || op == "QLinearMul") {
    return {{0, 1, 2, Spread::kOne}, {3, 4, 5, Spread::kOne}, {kOutput, 6, 7, Spread::kOne}};
  }
  if (op == "QLinearSigmoid" || op == "QLinearLeakyRelu" || op == "QLinearGlobalAveragePool" ||
      op == "QLinearAveragePool") {
    return {{0, 1, 2, Spread::kOne}, {kOutput, 3, 4, Spread::kOne}};
  }
  if (op == "QLinearConcat") {
    std::vector<Operand> operands = {{kOutput, 0, 1, Spread::kOne}};
    for (int first = 2; first + 2 < static_cast<int>(node.inputs.size()) + 1; first += 3) {
      operands.push_back({first, first + 1, first + 2, Spread::kOne});
    }
    return operands;
  }
  if (op == "QGemm") {
    return {{0, 1, 2, Spread::kOne}, {3, 4, 5, Spread::kUnchecked}, {kOutput, 7, 8, Spread::kOne}};
  }
  return {};
}

ValueId input_or_none(const Node& node, int index) {
  if (index < 0 || index >= static_cast<int>(node.inputs.size())) return kNoValue;
  return node.inputs[static_cast<std::size_t>(index)];
}

std::string input_name(const Node& node, int index) { return fmt::format("input {}", index); }

// The range of an 8-bit (or int32) quantized type.
bool value_range(DType dtype, std::int64_t& low, std::int64_t& high) {
  switch (dtype) {
    case DType::kInt8:
      low = std::numeric_limits<std::int8_t>::min();
      high = std::numeric_limits<std::int8_t>::max();
      return true;
    case DType::kUInt8:
      low = 0;
      high = std::numeric_limits<std::uint8_t>::max();
      return true;
    case DType::kInt32:
      low = std::numeric_limits<std::int32_t>::min();
      high = std::numeric_limits<std::int32_t>::max();
      return true;
    default:
      return false;
  }
}

void check_operand(const Graph& graph, const Node& node, const Operand& operand) {
  const ValueId data = operand.data == kOutput ? (node.outputs.empty() ? kNoValue : node.outputs[0])
                                               : input_or_none(node, operand.data);
  const ValueId scale = input_or_none(node, operand.scale);
  const ValueId zero_point = input_or_none(node, operand.zero_point);
  const std::string data_name =
      operand.data == kOutput ? "the output" : input_name(node, operand.data);

  std::int64_t scale_count = -1;
  if (scale != kNoValue && graph.value(scale).is_constant()) {
    const Tensor& values = *graph.value(scale).constant;
    scale_count = values.numel();
    if (values.dtype() == DType::kFloat32 || values.dtype() == DType::kFloat64) {
      for (std::int64_t i = 0; i < values.numel(); ++i) {
        const double s = values.number_at(i);
        if (!std::isfinite(s) || s <= 0.0) {
          throw Error(fmt::format("the scale of {} is {}{}: a scale must be a positive finite "
                                  "number",
                                  data_name, s, values.numel() > 1 ? fmt::format(" at {}", i) : ""),
                      {.node = node.name, .field = input_name(node, operand.scale)});
        }
      }
    }
  }
  if (zero_point != kNoValue && data != kNoValue) {
    const DType data_type = graph.type(data).dtype;
    const DType zero_type = graph.type(zero_point).dtype;
    std::int64_t low = 0, high = 0;
    if (zero_type != data_type && value_range(data_type, low, high)) {
      // A zero point stored in a wider type must still fit the data's type.
      if (graph.value(zero_point).is_constant()) {
        const Tensor& values = *graph.value(zero_point).constant;
        for (std::int64_t i = 0; i < values.numel(); ++i) {
          const double z = values.number_at(i);
          if (z < static_cast<double>(low) || z > static_cast<double>(high)) {
            throw Error(fmt::format("the zero point of {} is {}, outside the range [{}, {}] of its "
                                    "type {}",
                                    data_name, z, low, high, dtype_name(data_type)),
                        {.node = node.name, .field = input_name(node, operand.zero_point)});
          }
        }
      }
      throw Error(fmt::format("the zero point of {} is {}, not {} like its data", data_name,
                              dtype_name(zero_type), dtype_name(data_type)),
                  {.node = node.name, .field = input_name(node, operand.zero_point)});
    }
    if (graph.value(zero_point).is_constant() && scale_count >= 0 &&
        graph.value(zero_point).constant->numel() != scale_count) {
      throw Error(fmt::format("the zero point of {} has {} values and its scale {}", data_name,
                              graph.value(zero_point).constant->numel(), scale_count),
                  {.node = node.name, .field = input_name(node, operand.zero_point)});
    }
  }
  if (scale_count <= 1 || operand.spread == Spread::kUnchecked || data == kNoValue) return;
  const Shape& shape = graph.type(data).shape;
  const auto rank = static_cast<std::int64_t>(shape.size());
  std::int64_t axis = 0;
  if (operand.spread == Spread::kOne) {
    throw Error(
        fmt::format("the scale of {} has {} values; this op takes one", data_name, scale_count),
        {.node = node.name, .field = input_name(node, operand.scale)});
  }
  if (operand.spread == Spread::kAxis) axis = node.attributes.get_int("axis", 1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) {
    throw Error(fmt::format("axis {} is outside the {} axes of {}", axis, rank, data_name),
                {.node = node.name, .field = "axis"});
  }
  const std::int64_t length = shape[static_cast<std::size_t>(axis)];
  if (length >= 0 && length != scale_count) {
    throw Error(fmt::format("the scale of {} has {} values, not 1 or the {} of its axis {}",
                            data_name, scale_count, length, axis),
                {.node = node.name, .field = input_name(node, operand.scale)});
  }
}

}  // namespace

void check_quantization_parameters(const Graph& graph) {
  for (const Node& node : graph.nodes()) {
    for (const Operand& operand : operands_of(node)) check_operand(graph, node, operand);
  }
}

}  // namespace collage
