#include "collage/ir/flops.h"

#include <fmt/format.h>

#include <set>
#include <string_view>
#include <vector>

#include "collage/ir/error.h"

namespace collage {
namespace {

// Checked arithmetic on counts: a shape that fits in memory can still have a
// FLOP count that overflows int64, and a wrapped count would print as a
// small or negative number.
class Count {
 public:
  Count(std::int64_t value) : value_(value) {}  // NOLINT(google-explicit-constructor)
  std::int64_t value() const { return value_; }

  friend Count operator*(Count a, Count b) {
    std::int64_t product = 0;
    if (__builtin_mul_overflow(a.value_, b.value_, &product)) throw overflow();
    return product;
  }
  friend Count operator+(Count a, Count b) {
    std::int64_t sum = 0;
    if (__builtin_add_overflow(a.value_, b.value_, &sum)) throw overflow();
    return sum;
  }
  Count& operator+=(Count other) { return *this = *this + other; }
  Count& operator*=(Count other) { return *this = *this * other; }

 private:
  static Error overflow() { return Error("the FLOP count overflows int64"); }
  std::int64_t value_;
};

// Ops that only move, reinterpret or create data.
const std::set<std::string_view, std::less<>> kDataMovementOps = {
    "Cast",
    "CastLike",
    "Concat",
    "Constant",
    "ConstantOfShape",
    "DepthToSpace",
    "Dropout",
    "Expand",
    "Flatten",
    "Gather",
    "GatherElements",
    "GatherND",
    "Identity",
    "NonZero",
    "OneHot",
    "Pad",
    "Range",
    "Reshape",
    "ScatterElements",
    "ScatterND",
    "Shape",
    "Size",
    "Slice",
    "SpaceToDepth",
    "Split",
    "Squeeze",
    "Tile",
    "Transpose",
    "Trilu",
    "Unsqueeze",
};

// Ops that read every input element once and write fewer.
const std::set<std::string_view, std::less<>> kReductionOps = {
    "ArgMax",     "ArgMin",    "GlobalAveragePool", "GlobalLpPool",    "GlobalMaxPool",
    "ReduceL1",   "ReduceL2",  "ReduceLogSum",      "ReduceLogSumExp", "ReduceMax",
    "ReduceMean", "ReduceMin", "ReduceProd",        "ReduceSum",       "ReduceSumSquare",
};

std::int64_t numel_of(const Graph& graph, ValueId id) {
  return id == kNoValue ? 0 : graph.type(id).numel();
}

const Shape& shape_of(const Graph& graph, ValueId id) { return graph.type(id).shape; }

// Product of dims [from, end) of a shape; 1 when empty.
Count product_from(const Shape& shape, std::size_t from) {
  Count product = 1;
  for (std::size_t i = from; i < shape.size(); ++i) product *= shape[i];
  return product;
}

// `weights`: the input that holds the weights (QLinearConv's is 3).
Count conv_flops(const Graph& graph, const Node& node, std::size_t weights = 1) {
  if (node.input(weights) == kNoValue || node.outputs.empty()) return 0;
  const Shape& weight = shape_of(graph, node.input(weights));
  if (weight.size() < 2) return 0;
  // Every output element accumulates (C_in / group) * prod(kernel) products.
  Count output = numel_of(graph, node.outputs[0]);
  Count flops = 2 * output * product_from(weight, 1);
  if (weights == 1 && node.input(2) != kNoValue) flops += output;
  return flops;
}

// `weights`: the input that holds the weights (QLinearConvTranspose's is 3).
Count conv_transpose_flops(const Graph& graph, const Node& node, std::size_t weights = 1) {
  if (node.input(weights) == kNoValue || node.outputs.empty()) return 0;
  const Shape& weight = shape_of(graph, node.input(weights));
  if (weight.size() < 2) return 0;
  // Every input element is scattered into (C_out / group) * prod(kernel) outputs.
  Count flops = 2 * Count(numel_of(graph, node.input(0))) * product_from(weight, 1);
  if (weights == 1 && node.input(2) != kNoValue) flops += numel_of(graph, node.outputs[0]);
  return flops;
}

Count gemm_flops(const Graph& graph, const Node& node) {
  if (node.input(0) == kNoValue || node.outputs.empty()) return 0;
  const Shape& a = shape_of(graph, node.input(0));
  if (a.size() != 2) return 0;
  std::int64_t k = node.attributes.get_int("transA", 0) != 0 ? a[0] : a[1];
  Count output = numel_of(graph, node.outputs[0]);
  Count flops = 2 * output * k;
  if (node.input(2) != kNoValue) flops += output;
  return flops;
}

Count matmul_flops(const Graph& graph, const Node& node) {
  if (node.input(0) == kNoValue || node.outputs.empty()) return 0;
  const Shape& a = shape_of(graph, node.input(0));
  if (a.empty()) return 0;
  return 2 * Count(numel_of(graph, node.outputs[0])) * a.back();
}

Count pool_flops(const Graph& graph, const Node& node) {
  if (node.outputs.empty()) return 0;
  Count window = 1;
  for (std::int64_t k : node.attributes.get_ints("kernel_shape", {})) window *= k;
  return Count(numel_of(graph, node.outputs[0])) * window;
}

// RNN, GRU and LSTM: every step multiplies the input and the hidden state by
// each gate's weights, in every direction; the gates' own arithmetic is
// small beside it and not counted.
Count recurrent_flops(const Graph& graph, const Node& node) {
  if (node.input(0) == kNoValue || node.input(2) == kNoValue) return 0;
  const Shape& x = shape_of(graph, node.input(0));
  const Shape& r = shape_of(graph, node.input(2));
  if (x.size() != 3 || r.size() != 3) return 0;
  // X is [steps, batch, input] or [batch, steps, input]; R [directions,
  // gates * hidden, hidden].
  return 2 * Count(x[0]) * x[1] * r[0] * r[1] * (x[2] + r[2]);
}

// Gelu and Swish count the elementwise ops of the chains exporters write
// for them, so that fusing a chain into one node leaves a model's count as it
// was: x * 0.5 * (1 + erf(x / sqrt(2))) is five, the tanh form (x^3, four
// multiplies, two adds, tanh) eight, x * sigmoid(x) two and
// x * sigmoid(alpha * x) three.
Count ops_per_element(const Node& node) {
  if (node.op_type == "Gelu") {
    return node.attributes.get_string("approximate", "none") == "tanh" ? 8 : 5;
  }
  if (node.op_type == "Swish") return node.attributes.get_float("alpha", 1.0f) == 1.0f ? 2 : 3;
  return 1;
}

Count flops_of(const Graph& graph, const Node& node) {
  const std::string& op = node.op_type;
  // ONNX Runtime's quantized GEMM: multiply-adds as a MatMul's.
  if (node.domain == "com.microsoft" && op == "QGemm") return matmul_flops(graph, node);
  if (node.domain == "collage" && op == "QLinearConvTranspose") {
    return conv_transpose_flops(graph, node, 3);
  }
  if (!node.domain.empty() && node.domain != "ai.onnx") return 0;
  if (op == "Conv" || op == "ConvInteger") return conv_flops(graph, node);
  if (op == "QLinearConv") return conv_flops(graph, node, 3);
  if (op == "QLinearMatMul") return matmul_flops(graph, node);
  if (op == "ConvTranspose") return conv_transpose_flops(graph, node);
  if (op == "Gemm") return gemm_flops(graph, node);
  if (op == "MatMul" || op == "MatMulInteger") return matmul_flops(graph, node);
  if (op == "MaxPool" || op == "AveragePool" || op == "LpPool") return pool_flops(graph, node);
  if (op == "RNN" || op == "GRU" || op == "LSTM") return recurrent_flops(graph, node);
  if (kDataMovementOps.count(op) != 0) return 0;
  if (kReductionOps.count(op) != 0) return numel_of(graph, node.input(0));
  if (node.outputs.empty()) return 0;
  Count output = numel_of(graph, node.outputs[0]);
  // Inference batch norm is one scale and one shift per element.
  if (op == "BatchNormalization") return 2 * output;
  // Subtract the max, exponentiate, sum, divide.
  if (op == "Softmax" || op == "LogSoftmax") return 4 * output;
  // Mean, variance, normalize, scale, shift.
  if (op == "LayerNormalization" || op == "InstanceNormalization" || op == "GroupNormalization") {
    return 5 * output;
  }
  return ops_per_element(node) * output;
}

}  // namespace

std::int64_t node_flops(const Graph& graph, const Node& node) {
  try {
    return flops_of(graph, node).value();
  } catch (const Error& error) {
    throw Error(error.message(), {.node = node.name});
  }
}

std::int64_t graph_flops(const Graph& graph) {
  Count total = 0;
  for (const Node& node : graph.nodes()) total += node_flops(graph, node);
  return total.value();
}

std::int64_t parameter_count(const Graph& graph) {
  // A quantized product's int32 bias is a parameter; other int32 constants
  // (shapes, indices) are not.
  std::vector<bool> bias(graph.num_values(), false);
  for (const Node& node : graph.nodes()) {
    const bool convolution =
        node.op_type == "QLinearConv" || node.op_type == "QLinearConvTranspose";
    const std::size_t at = convolution ? 8 : node.op_type == "QGemm" ? 6 : 0;
    if (at != 0 && node.inputs.size() > at && node.input(at) != kNoValue) {
      bias[static_cast<std::size_t>(node.input(at))] = true;
    }
  }
  Count total = 0;
  for (std::size_t v = 0; v < graph.num_values(); ++v) {
    const Value& value = graph.value(static_cast<ValueId>(v));
    if (!value.is_constant()) continue;
    const DType dtype = value.type.dtype;
    if (dtype == DType::kFloat32 || dtype == DType::kFloat64 || dtype == DType::kFloat16 ||
        dtype == DType::kInt8 || dtype == DType::kUInt8 || (dtype == DType::kInt32 && bias[v])) {
      total += value.type.numel();
    }
  }
  return total.value();
}

}  // namespace collage
