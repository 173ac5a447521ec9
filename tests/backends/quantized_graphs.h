// Small quantized graphs and 8-bit comparisons that the int8 backends'
// tests share: QLinearConv, QLinearConvTranspose and QLinearMatMul/QGemm
// graphs with random int8 weights, random 8-bit inputs, and the largest
// difference in quantization steps between two 8-bit results.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "backends/backend_test_util.h"
#include "collage/ir/graph.h"

namespace collage::testing {

template <typename T>
inline Tensor random_integers(const Shape& shape, std::uint32_t seed, int low, int high) {
  Tensor tensor = Tensor::allocate(TensorType{dtype_of<T>(), shape});
  std::mt19937 engine(seed);
  std::uniform_int_distribution<int> distribution(low, high);
  for (std::int64_t i = 0; i < tensor.numel(); ++i) {
    tensor.data<T>()[i] = static_cast<T>(distribution(engine));
  }
  return tensor;
}

template <typename T>
inline Tensor scalar_of(T value) {
  return Tensor::from_vector<T>({value}, {});
}

struct QConvCase {
  std::string name;
  std::int64_t channels, out_channels, groups, stride, size;
  bool per_channel, bias, signed_input, signed_output;
};

// x (graph input) -> a quantized convolution of c's channels, groups,
// stride and signedness by random int8 weights of `w_shape` (`scale_count`
// scales) -> y of spatial size `out`, pads 1: the op's inputs in
// QLinearConv's order, with y added.
struct QConvParts {
  Graph g;
  std::vector<ValueId> inputs;
  ValueId y = kNoValue;
};

inline QConvParts qconv_parts(const QConvCase& c, const Shape& w_shape, std::int64_t scale_count,
                              std::int64_t out) {
  QConvParts parts;
  Graph& g = parts.g;
  g.opset = 13;
  const DType x_type = c.signed_input ? DType::kInt8 : DType::kUInt8;
  const DType y_type = c.signed_output ? DType::kInt8 : DType::kUInt8;
  const ValueId x = g.add_input("x", TensorType{x_type, {1, c.channels, c.size, c.size}});
  auto eight_bit = [&](DType type, std::int32_t value) {
    return type == DType::kInt8 ? scalar_of<std::int8_t>(static_cast<std::int8_t>(value))
                                : scalar_of<std::uint8_t>(static_cast<std::uint8_t>(value));
  };
  std::vector<float> w_scales;
  for (std::int64_t m = 0; m < scale_count; ++m) {
    w_scales.push_back(0.002f + 0.001f * static_cast<float>(m % 5));
  }
  parts.inputs = {x,
                  g.add_constant("x_scale", scalar_of<float>(0.04f)),
                  g.add_constant("x_zero", eight_bit(x_type, c.signed_input ? -3 : 120)),
                  g.add_constant("w", random_integers<std::int8_t>(w_shape, 7, -127, 127)),
                  g.add_constant("w_scale", Tensor::from_vector<float>(w_scales, {scale_count})),
                  g.add_constant("w_zero", Tensor::zeros(TensorType{DType::kInt8, {scale_count}})),
                  g.add_constant("y_scale", scalar_of<float>(0.05f)),
                  g.add_constant("y_zero", eight_bit(y_type, c.signed_output ? 5 : 100))};
  if (c.bias) {
    parts.inputs.push_back(
        g.add_constant("bias", random_integers<std::int32_t>({c.out_channels}, 9, -2000, 2000)));
  }
  parts.y = g.add_value("y", TensorType{y_type, {1, c.out_channels, out, out}});
  return parts;
}

// x (graph input) -> QLinearConv 3x3, pads 1 -> y.
inline Graph qconv_graph(const QConvCase& c) {
  QConvParts parts =
      qconv_parts(c, {c.out_channels, c.channels / c.groups, 3, 3},
                  c.per_channel ? c.out_channels : 1, (c.size + 2 - 3) / c.stride + 1);
  Graph& g = parts.g;
  g.add_node("QLinearConv", parts.inputs, {parts.y},
             attrs({{"group", c.groups},
                    {"pads", std::vector<std::int64_t>{1, 1, 1, 1}},
                    {"strides", std::vector<std::int64_t>{c.stride, c.stride}}}),
             "conv");
  g.add_output(parts.y);
  return std::move(g);
}

// The QLinearConv cases every int8 backend is checked on: per-tensor and
// per-channel weights, bias, groups and strides, depthwise, signed data.
inline const std::vector<QConvCase>& qconv_cases() {
  static const std::vector<QConvCase> cases = {
      {"PerTensorU8", 8, 16, 1, 1, 10, false, false, false, false},
      {"PerChannelWithBias", 8, 16, 1, 1, 10, true, true, false, false},
      {"GroupedStrided", 8, 16, 2, 2, 11, true, true, false, true},
      {"Depthwise", 16, 16, 16, 1, 9, true, true, false, false},
      {"SignedInput", 8, 8, 1, 1, 7, true, true, true, true}};
  return cases;
}

// x (graph input) -> collage QLinearConvTranspose 4x4, strides c.stride,
// pads 1 -> y; its weights [C, M/g, 4, 4] have one scale, or one per output
// channel of a group.
inline Graph qconv_transpose_graph(const QConvCase& c) {
  const std::int64_t group_out = c.out_channels / c.groups;
  QConvParts parts = qconv_parts(c, {c.channels, group_out, 4, 4}, c.per_channel ? group_out : 1,
                                 (c.size - 1) * c.stride - 2 + 4);
  Graph& g = parts.g;
  g.other_opsets["collage"] = 1;
  const NodeId node =
      g.add_node("QLinearConvTranspose", parts.inputs, {parts.y},
                 attrs({{"group", c.groups},
                        {"pads", std::vector<std::int64_t>{1, 1, 1, 1}},
                        {"strides", std::vector<std::int64_t>{c.stride, c.stride}}}),
                 "deconv");
  g.node(node).domain = "collage";
  g.add_output(parts.y);
  return std::move(g);
}

// The QLinearConvTranspose cases: per-tensor and per-channel weights, bias,
// groups, strides 1 and 2, signed data.
inline const std::vector<QConvCase>& qconv_transpose_cases() {
  static const std::vector<QConvCase> cases = {
      {"PerTensorU8", 8, 16, 1, 2, 6, false, false, false, false},
      {"PerChannelWithBias", 8, 16, 1, 2, 6, true, true, false, false},
      {"GroupedStride1", 8, 12, 2, 1, 7, true, true, false, true},
      {"SignedPerTensor", 8, 8, 1, 2, 5, false, true, true, true}};
  return cases;
}

// Random 8-bit inputs for every graph input.
inline std::vector<Tensor> random_eight_bit_inputs(const Graph& g, std::uint32_t seed) {
  std::vector<Tensor> inputs;
  for (ValueId input : g.inputs()) {
    const TensorType& type = g.type(input);
    inputs.push_back(type.dtype == DType::kInt8
                         ? random_integers<std::int8_t>(type.shape, seed++, -128, 127)
                         : random_integers<std::uint8_t>(type.shape, seed++, 0, 255));
  }
  return inputs;
}

// The largest |a - b| over the elements of two 8-bit tensors.
inline int largest_difference(const Tensor& a, const Tensor& b) {
  EXPECT_EQ(a.type(), b.type());
  int largest = 0;
  for (std::int64_t i = 0; i < a.numel(); ++i) {
    const int x = a.dtype() == DType::kInt8 ? a.data<std::int8_t>()[i] : a.data<std::uint8_t>()[i];
    const int y = b.dtype() == DType::kInt8 ? b.data<std::int8_t>()[i] : b.data<std::uint8_t>()[i];
    largest = std::max(largest, std::abs(x - y));
  }
  return largest;
}

// a (graph input) <op> b, b an input or a per-channel constant, into y:
// com.microsoft QLinearAdd or QLinearMul of uint8 values.
inline Graph qlinear_binary_graph(const std::string& op, bool constant_b) {
  Graph g;
  g.opset = 13;
  g.other_opsets["com.microsoft"] = 1;
  const ValueId a = g.add_input("a", TensorType{DType::kUInt8, {1, 8, 6, 6}});
  const ValueId b =
      constant_b ? g.add_constant("b", random_integers<std::uint8_t>({1, 8, 1, 1}, 4, 0, 255))
                 : g.add_input("b", TensorType{DType::kUInt8, {1, 8, 6, 6}});
  const ValueId y = g.add_value("y", TensorType{DType::kUInt8, {1, 8, 6, 6}});
  const NodeId node = g.add_node(op,
                                 {a, g.add_constant("as", scalar_of<float>(0.03f)),
                                  g.add_constant("az", scalar_of<std::uint8_t>(128)), b,
                                  g.add_constant("bs", scalar_of<float>(0.02f)),
                                  g.add_constant("bz", scalar_of<std::uint8_t>(7)),
                                  g.add_constant("ys", scalar_of<float>(0.05f)),
                                  g.add_constant("yz", scalar_of<std::uint8_t>(100))},
                                 {y}, {}, "binary");
  g.node(node).domain = "com.microsoft";
  g.add_output(y);
  return g;
}

// x -> a com.microsoft op of (X, X_scale, X_zero_point, Y_scale, Y_zero_point) -> y.
inline Graph qlinear_unary_graph(const std::string& op, const Shape& y_shape, float y_scale) {
  Graph g;
  g.opset = 13;
  g.other_opsets["com.microsoft"] = 1;
  const ValueId x = g.add_input("x", TensorType{DType::kUInt8, {1, 8, 7, 7}});
  const ValueId y = g.add_value("y", TensorType{DType::kUInt8, y_shape});
  const NodeId node = g.add_node(op,
                                 {x, g.add_constant("xs", scalar_of<float>(0.05f)),
                                  g.add_constant("xz", scalar_of<std::uint8_t>(120)),
                                  g.add_constant("ys", scalar_of<float>(y_scale)),
                                  g.add_constant("yz", scalar_of<std::uint8_t>(0))},
                                 {y}, {}, "unary");
  g.node(node).domain = "com.microsoft";
  g.add_output(y);
  return g;
}

// A (graph input) times a constant int8 B: QLinearMatMul of a batch of
// matrices with one scale per column, and com.microsoft QGemm with transB,
// an int32 C and a float32 or quantized result.
inline Graph qmatmul_graph(bool gemm, bool float_output, Shape a_shape = {}) {
  Graph g;
  g.opset = 13;
  if (a_shape.empty()) a_shape = gemm ? Shape{4, 32} : Shape{2, 3, 32};
  const ValueId a = g.add_input("a", TensorType{DType::kUInt8, a_shape});
  const std::int64_t n = 20;
  std::vector<float> b_scales;
  for (std::int64_t j = 0; j < n; ++j)
    b_scales.push_back(0.002f + 0.0005f * static_cast<float>(j % 7));
  std::vector<ValueId> inputs = {
      a,
      g.add_constant("a_scale", scalar_of<float>(0.03f)),
      g.add_constant("a_zero", scalar_of<std::uint8_t>(110)),
      g.add_constant(
          "b", random_integers<std::int8_t>(gemm ? Shape{n, 32} : Shape{32, n}, 5, -127, 127)),
      g.add_constant("b_scale", Tensor::from_vector<float>(b_scales, {n})),
      g.add_constant("b_zero", Tensor::zeros(TensorType{DType::kInt8, {n}}))};
  if (gemm) inputs.push_back(g.add_constant("c", random_integers<std::int32_t>({n}, 6, -500, 500)));
  if (!float_output) {
    inputs.push_back(g.add_constant("y_scale", scalar_of<float>(0.04f)));
    inputs.push_back(g.add_constant("y_zero", scalar_of<std::uint8_t>(128)));
  }
  Shape y_shape = a_shape;
  y_shape.back() = n;
  const ValueId y =
      g.add_value("y", TensorType{float_output ? DType::kFloat32 : DType::kUInt8, y_shape});
  const NodeId node = g.add_node(gemm ? "QGemm" : "QLinearMatMul", inputs, {y},
                                 gemm ? attrs({{"transB", std::int64_t{1}}}) : Attributes{}, "mm");
  if (gemm) {
    g.node(node).domain = "com.microsoft";
    g.other_opsets["com.microsoft"] = 1;
  }
  g.add_output(y);
  return g;
}

// The start of a quantized network added to `g`: float32 x [1,8,8,8] ->
// QuantizeLinear ("quantize", into "q") -> QLinearConv ("conv", 3x3, 16
// per-channel outputs with a bias, into uint8 `y` [1,16,8,8], named
// `y_name`), with the constants of qconv_graph's case.
struct QuantizedConvStart {
  ValueId y;
  // The convolution's output scale and zero point (constants of `g`).
  ValueId y_scale;
  ValueId y_zero;
  float step;  // the output scale's value
};

inline QuantizedConvStart add_quantized_conv(Graph& g, const std::string& y_name) {
  const Graph conv = qconv_graph(QConvCase{"", 8, 16, 1, 1, 8, true, true, false, false});
  const Node& c = conv.node(0);
  auto copy = [&](std::size_t i) {
    const Value& v = conv.value(c.input(i));
    return g.add_constant(v.name, *v.constant);
  };
  const ValueId x = g.add_input("x", TensorType{DType::kFloat32, {1, 8, 8, 8}});
  const ValueId q = g.add_value("q", TensorType{DType::kUInt8, {1, 8, 8, 8}});
  g.add_node("QuantizeLinear", {x, copy(1), copy(2)}, {q}, {}, "quantize");
  std::vector<ValueId> conv_inputs = {q};
  for (std::size_t i = 1; i < c.inputs.size(); ++i) conv_inputs.push_back(copy(i));
  const ValueId y = g.add_value(y_name, TensorType{DType::kUInt8, {1, 16, 8, 8}});
  g.add_node("QLinearConv", conv_inputs, {y}, c.attributes, "conv");
  return {y, conv_inputs[6], conv_inputs[7], conv.value(c.input(6)).constant->data<float>()[0]};
}

// x (float32) -> QuantizeLinear -> QLinearConv -> com.microsoft QLinearAdd
// (of the convolution with itself, into scale 0.09) -> DequantizeLinear -> y:
// uint8 values between the int8 ops; nodes quantize, conv, add, dequantize.
inline Graph qconv_add_chain() {
  Graph g;
  g.opset = 13;
  g.other_opsets["com.microsoft"] = 1;
  const QuantizedConvStart start = add_quantized_conv(g, "y8");
  const ValueId y = start.y;
  const ValueId sum = g.add_value("sum", TensorType{DType::kUInt8, {1, 16, 8, 8}});
  const ValueId y_scale = start.y_scale;
  const ValueId y_zero = start.y_zero;
  const NodeId add =
      g.add_node("QLinearAdd",
                 {y, y_scale, y_zero, y, y_scale, y_zero,
                  g.add_constant("sum_scale", Tensor::from_vector<float>({0.09f}, {})), y_zero},
                 {sum}, {}, "add");
  g.node(add).domain = "com.microsoft";
  const ValueId out = g.add_value("y", TensorType{DType::kFloat32, {1, 16, 8, 8}});
  g.add_node("DequantizeLinear",
             {sum, g.add_constant("out_scale", Tensor::from_vector<float>({0.09f}, {})), y_zero},
             {out}, {}, "dequantize");
  g.add_output(out);
  return g;
}

// x [1,16,9,9] -> MaxPool 3x3, strides 2 -> y, of `type` (int8 or uint8).
inline Graph eight_bit_max_pool_graph(DType type) {
  Graph g;
  const ValueId x = g.add_input("x", TensorType{type, {1, 16, 9, 9}});
  const ValueId y = g.add_value("y", TensorType{type, {1, 16, 4, 4}});
  g.add_node("MaxPool", {x}, {y},
             attrs({{"kernel_shape", std::vector<std::int64_t>{3, 3}},
                    {"strides", std::vector<std::int64_t>{2, 2}}}),
             "pool");
  g.add_output(y);
  return g;
}

// Compiles `graph` (8-bit inputs and outputs) with every 4-D edge in
// `layout`, runs it on random inputs stored that way, and checks each
// output, back in plain order, within one step of the reference's.
// Every node of `graph` claimed by `backend`, and the partition's one 8-bit
// output, compiled for `threads`, within one step of the reference's.
inline void expect_backend_within_one_step(const Backend& backend, const Graph& graph,
                                           std::uint32_t seed, int threads) {
  for (const Node& node : graph.nodes()) {
    ASSERT_TRUE(backend.supports(graph, node)) << node.op_type;
  }
  auto kernel = backend.compile(graph, CompileOptions{threads});
  ASSERT_TRUE(kernel.ok()) << kernel.error();
  const std::vector<Tensor> inputs = random_eight_bit_inputs(graph, seed);
  const std::vector<Tensor> got = run(**kernel, graph, inputs);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_LE(largest_difference(got[0], run_reference(graph, inputs)[0]), 1);
}

inline void expect_eight_bit_edges_within_one_step(const Backend& backend, const Graph& graph,
                                                   EdgeLayout layout, int threads) {
  CompileOptions options{threads};
  auto layouts = [&](const std::vector<ValueId>& edges) {
    std::vector<EdgeLayout> result;
    for (ValueId edge : edges) {
      result.push_back(graph.type(edge).rank() == 4 ? layout : EdgeLayout::kPlain);
    }
    return result;
  };
  options.input_layouts = layouts(graph.inputs());
  options.output_layouts = layouts(graph.outputs());
  auto kernel = backend.compile(graph, options);
  ASSERT_TRUE(kernel.ok()) << kernel.error();
  const std::vector<Tensor> inputs = random_eight_bit_inputs(graph, 12);
  std::vector<Tensor> stored;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    stored.push_back(convert_edge_layout(inputs[i], options.input_layouts[i], false));
  }
  std::vector<Tensor> actual = allocate_outputs(graph);
  for (int run = 0; run < 2; ++run) (*kernel)->run(stored, actual);
  const std::vector<Tensor> expected = run_reference(graph, inputs);
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_LE(largest_difference(convert_edge_layout(actual[i], options.output_layouts[i], true),
                                 expected[i]),
              1)
        << "output " << i << " in " << edge_layout_name(options.output_layouts[i]);
  }
}

}  // namespace collage::testing
