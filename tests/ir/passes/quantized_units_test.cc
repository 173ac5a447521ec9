// fuse_quantized_convolutions: DequantizeLinear -> Conv [-> Relu] ->
// QuantizeLinear becomes one QLinearConv writing the QuantizeLinear's output;
// the same for MatMul (QLinearMatMul), Gemm (QGemm) and the other units.
#include "collage/ir/passes/quantized_units.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "ir/passes/passes_test_util.h"

namespace collage {
namespace {

using testing::f32;
using testing::node_writing;

template <typename T>
Tensor values(Shape shape, const std::vector<T>& data) {
  return Tensor::from_vector<T>(data, {static_cast<std::int64_t>(data.size())})
      .reshaped(std::move(shape));
}

// xq u8[1,2,4,4] -DQ-> x; w s8[3,2,1,1] -DQ(axis 0)-> wf; Conv(x, wf, bias)
// -> c [-> Relu -> r] -QuantizeLinear(0.1, zero)-> y u8.
struct QdqConv {
  Graph g;
  ValueId xq = g.add_input("xq", TensorType{DType::kUInt8, {1, 2, 4, 4}});
  ValueId xs = g.add_constant("xs", values<float>({}, {0.5f}));
  ValueId xz = g.add_constant("xz", values<std::uint8_t>({}, {128}));
  ValueId w = g.add_constant("w", values<std::int8_t>({3, 2, 1, 1}, {1, -2, 3, -4, 5, -6}));
  ValueId ws = g.add_constant("ws", values<float>({3}, {0.25f, 0.5f, 1.0f}));
  ValueId x = g.add_value("x", f32({1, 2, 4, 4}));
  ValueId wf = g.add_value("wf", f32({3, 2, 1, 1}));
  ValueId c = g.add_value("c", f32({1, 3, 4, 4}));
  ValueId y = g.add_value("y", TensorType{DType::kUInt8, {1, 3, 4, 4}});

  QdqConv(bool relu, std::uint8_t y_zero, ValueId (*make_bias)(QdqConv&)) {
    g.add_node("DequantizeLinear", {xq, xs, xz}, {x});
    Attributes axis0;
    axis0.set("axis", std::int64_t{0});
    g.add_node("DequantizeLinear", {w, ws}, {wf}, axis0);
    std::vector<ValueId> conv_inputs = {x, wf};
    if (make_bias != nullptr) conv_inputs.push_back(make_bias(*this));
    g.add_node("Conv", conv_inputs, {c});
    ValueId quantized = c;
    if (relu) {
      quantized = g.add_value("r", f32({1, 3, 4, 4}));
      g.add_node("Relu", {c}, {quantized});
    }
    g.add_node("QuantizeLinear",
               {quantized, g.add_constant("ys", values<float>({}, {0.1f})),
                g.add_constant("yz", values<std::uint8_t>({}, {y_zero}))},
               {y});
    g.add_output(y);
  }
};

ValueId float_bias(QdqConv& q) {
  return q.g.add_constant("bias", values<float>({3}, {1.0f, -1.0f, 0.3f}));
}

ValueId int32_bias(QdqConv& q) {
  // At the sums' scale x_scale * w_scale: 0.125, 0.25, 0.5.
  const ValueId b = q.g.add_value("bf", f32({3}));
  q.g.add_node("DequantizeLinear",
               {q.g.add_constant("bq", values<std::int32_t>({3}, {8, -4, 1})),
                q.g.add_constant("bs", values<float>({3}, {0.125f, 0.25f, 0.5f}))},
               {b}, [] {
                 Attributes a;
                 a.set("axis", std::int64_t{0});
                 return a;
               }());
  return b;
}

TEST(QuantizedUnitsTest, AQdqConvolutionWithReluAndAnInt32BiasBecomesOneQLinearConv) {
  QdqConv q(/*relu=*/true, /*y_zero=*/0, int32_bias);
  EXPECT_EQ(fuse_quantized_convolutions(q.g), 1);
  ASSERT_EQ(q.g.num_nodes(), 1u);
  const Node& conv = node_writing(q.g, "y");
  EXPECT_EQ(conv.op_type, "QLinearConv");
  ASSERT_EQ(conv.inputs.size(), 9u);
  EXPECT_EQ(q.g.value(conv.inputs[0]).name, "xq");
  EXPECT_EQ(q.g.value(conv.inputs[3]).name, "w");
  EXPECT_EQ(q.g.value(conv.inputs[4]).name, "ws");
  EXPECT_EQ(q.g.value(conv.inputs[8]).name, "bq");
  // The weights' zero point, left out, is a zero of their type.
  EXPECT_EQ(q.g.type(conv.inputs[5]).dtype, DType::kInt8);
}

TEST(QuantizedUnitsTest, AFloatBiasIsRoundedToTheSumsScale) {
  QdqConv q(/*relu=*/false, /*y_zero=*/128, float_bias);
  EXPECT_EQ(fuse_quantized_convolutions(q.g), 1);
  const Node& conv = node_writing(q.g, "y");
  ASSERT_EQ(conv.inputs.size(), 9u);
  const Tensor& bias = *q.g.value(conv.inputs[8]).constant;
  ASSERT_EQ(bias.dtype(), DType::kInt32);
  // 1 / 0.125, -1 / 0.25, 0.3 / 0.5 = 8, -4, 0.6 -> 1.
  EXPECT_EQ(std::vector<std::int32_t>(bias.data<std::int32_t>(), bias.data<std::int32_t>() + 3),
            (std::vector<std::int32_t>{8, -4, 1}));
}

TEST(QuantizedUnitsTest, AReluStaysWhereTheOutputZeroPointDoesNotClampNegatives) {
  QdqConv q(/*relu=*/true, /*y_zero=*/128, nullptr);
  EXPECT_EQ(fuse_quantized_convolutions(q.g), 0);
  EXPECT_EQ(node_writing(q.g, "y").op_type, "QuantizeLinear");
}

TEST(QuantizedUnitsTest, AConvolutionWhoseFloatResultIsReadElsewhereStays) {
  QdqConv q(/*relu=*/false, /*y_zero=*/0, nullptr);
  q.g.add_output(q.c);
  EXPECT_EQ(fuse_quantized_convolutions(q.g), 0);
  EXPECT_EQ(node_writing(q.g, "c").op_type, "Conv");
}

// xq u8[1,4,3,3] -DQ-> x; w s8[4,3,2,2] -DQ(axis 1: a scale per output
// channel of a group)-> wf; ConvTranspose(x, wf, float bias), 2 groups,
// strides 2 -> c [1,6,6,6] -QuantizeLinear-> y: one collage
// QLinearConvTranspose whose bias is rounded at x_scale * w_scale[m mod 3].
TEST(QuantizedUnitsTest, AQdqConvTransposeBecomesOneQLinearConvTranspose) {
  Graph g;
  const ValueId xq = g.add_input("xq", TensorType{DType::kUInt8, {1, 4, 3, 3}});
  const ValueId x = g.add_value("x", f32({1, 4, 3, 3}));
  const ValueId wf = g.add_value("wf", f32({4, 3, 2, 2}));
  const ValueId c = g.add_value("c", f32({1, 6, 6, 6}));
  const ValueId y = g.add_value("y", TensorType{DType::kUInt8, {1, 6, 6, 6}});
  g.add_node("DequantizeLinear",
             {xq, g.add_constant("xs", values<float>({}, {0.5f})),
              g.add_constant("xz", values<std::uint8_t>({}, {128}))},
             {x});
  Attributes axis1;
  axis1.set("axis", std::int64_t{1});
  g.add_node("DequantizeLinear",
             {g.add_constant("w", Tensor::zeros(TensorType{DType::kInt8, {4, 3, 2, 2}})),
              g.add_constant("ws", values<float>({3}, {0.25f, 0.5f, 1.0f}))},
             {wf}, axis1);
  Attributes transpose;
  transpose.set("group", std::int64_t{2});
  transpose.set("strides", std::vector<std::int64_t>{2, 2});
  g.add_node(
      "ConvTranspose",
      {x, wf, g.add_constant("b", values<float>({6}, {1.0f, 1.0f, 1.0f, -1.0f, 0.5f, 2.0f}))}, {c},
      transpose);
  g.add_node("QuantizeLinear", {c, g.add_constant("ys", values<float>({}, {0.1f}))}, {y});
  g.add_output(y);
  EXPECT_EQ(fuse_quantized_conv_transposes(g), 1);
  ASSERT_EQ(g.num_nodes(), 1u);
  const Node& unit = node_writing(g, "y");
  EXPECT_EQ(unit.op_type, "QLinearConvTranspose");
  EXPECT_EQ(unit.domain, "collage");
  EXPECT_EQ(g.other_opsets.count("collage"), 1u);
  EXPECT_EQ(unit.attributes.get_int("group", 1), 2);
  ASSERT_EQ(unit.inputs.size(), 9u);
  EXPECT_EQ(g.value(unit.inputs[3]).name, "w");
  EXPECT_EQ(g.value(unit.inputs[4]).name, "ws");
  // Sums' scales 0.125, 0.25, 0.5, then again: 8, 4, 2, -8, 2, 4.
  const Tensor& bias = *g.value(unit.inputs[8]).constant;
  ASSERT_EQ(bias.dtype(), DType::kInt32);
  EXPECT_EQ(std::vector<std::int32_t>(bias.data<std::int32_t>(), bias.data<std::int32_t>() + 6),
            (std::vector<std::int32_t>{8, 4, 2, -8, 2, 4}));
}

// aq u8[2,4,8] -DQ-> a; b s8[8,6] -DQ(axis 1, a scale per column)-> bf;
// MatMul -> m -QuantizeLinear-> y: one QLinearMatMul.
TEST(QuantizedUnitsTest, AQdqMatMulWithPerColumnWeightsBecomesOneQLinearMatMul) {
  Graph g;
  const ValueId aq = g.add_input("aq", TensorType{DType::kUInt8, {2, 4, 8}});
  const ValueId a = g.add_value("a", f32({2, 4, 8}));
  const ValueId bf = g.add_value("bf", f32({8, 6}));
  const ValueId m = g.add_value("m", f32({2, 4, 6}));
  const ValueId y = g.add_value("y", TensorType{DType::kUInt8, {2, 4, 6}});
  g.add_node("DequantizeLinear",
             {aq, g.add_constant("as", values<float>({}, {0.1f})),
              g.add_constant("az", values<std::uint8_t>({}, {3}))},
             {a});
  Attributes axis1;
  axis1.set("axis", std::int64_t{1});
  g.add_node("DequantizeLinear",
             {g.add_constant("b", Tensor::zeros(TensorType{DType::kInt8, {8, 6}})),
              g.add_constant("bs", values<float>({6}, {1, 2, 3, 4, 5, 6}))},
             {bf}, axis1);
  g.add_node("MatMul", {a, bf}, {m});
  g.add_node("QuantizeLinear", {m, g.add_constant("ys", values<float>({}, {0.5f}))}, {y});
  g.add_output(y);
  EXPECT_EQ(fuse_quantized_matmuls(g), 1);
  ASSERT_EQ(g.num_nodes(), 1u);
  const Node& product = node_writing(g, "y");
  EXPECT_EQ(product.op_type, "QLinearMatMul");
  ASSERT_EQ(product.inputs.size(), 8u);
  EXPECT_EQ(g.value(product.inputs[3]).name, "b");
  EXPECT_EQ(g.value(product.inputs[4]).name, "bs");
  // QuantizeLinear's zero point, left out, is a uint8 zero.
  EXPECT_EQ(g.type(product.inputs[7]).dtype, DType::kUInt8);
}

// aq u8[2,8] -DQ-> a; b s8[6,8] -DQ(axis 0, a scale per output row)-> bf;
// Gemm(a, bf, bias, transB) -> m -QuantizeLinear-> y: PyTorch's quantized
// Linear, one com.microsoft QGemm with the bias as int32 sums.
Graph qdq_gemm(float beta) {
  Graph g;
  const ValueId aq = g.add_input("aq", TensorType{DType::kUInt8, {2, 8}});
  const ValueId a = g.add_value("a", f32({2, 8}));
  const ValueId bf = g.add_value("bf", f32({6, 8}));
  const ValueId m = g.add_value("m", f32({2, 6}));
  const ValueId y = g.add_value("y", TensorType{DType::kUInt8, {2, 6}});
  g.add_node("DequantizeLinear",
             {aq, g.add_constant("as", values<float>({}, {0.5f})),
              g.add_constant("az", values<std::uint8_t>({}, {3}))},
             {a});
  Attributes axis0;
  axis0.set("axis", std::int64_t{0});
  g.add_node("DequantizeLinear",
             {g.add_constant("b", Tensor::zeros(TensorType{DType::kInt8, {6, 8}})),
              g.add_constant("bs", values<float>({6}, {1, 2, 3, 4, 5, 6}))},
             {bf}, axis0);
  Attributes gemm;
  gemm.set("transB", std::int64_t{1});
  gemm.set("beta", beta);
  g.add_node("Gemm", {a, bf, g.add_constant("c", values<float>({6}, {1, 2, 3, 4, 5, 6}))}, {m},
             gemm);
  g.add_node("QuantizeLinear", {m, g.add_constant("ys", values<float>({}, {0.25f}))}, {y});
  g.add_output(y);
  return g;
}

TEST(QuantizedUnitsTest, AQdqGemmWithPerRowWeightsBecomesOneQGemm) {
  Graph g = qdq_gemm(1.0f);
  EXPECT_EQ(fuse_quantized_gemms(g), 1);
  ASSERT_EQ(g.num_nodes(), 1u);
  const Node& product = node_writing(g, "y");
  EXPECT_EQ(product.op_type, "QGemm");
  EXPECT_EQ(product.domain, "com.microsoft");
  EXPECT_EQ(product.attributes.get_int("transB", 0), 1);
  EXPECT_FALSE(product.attributes.has("beta"));
  ASSERT_EQ(product.inputs.size(), 9u);
  EXPECT_EQ(g.value(product.inputs[3]).name, "b");
  EXPECT_EQ(g.value(product.inputs[7]).name, "ys");
  // The bias at the sums' scale 0.5 * bs[j]: c[j] / (0.5 j) = 2 for every j.
  const Tensor& bias = *g.value(product.inputs[6]).constant;
  ASSERT_EQ(bias.dtype(), DType::kInt32);
  for (std::int64_t j = 0; j < 6; ++j) EXPECT_EQ(bias.int_at(j), 2);
}

TEST(QuantizedUnitsTest, AGemmThatScalesItsBiasStaysFloat) {
  Graph g = qdq_gemm(0.5f);
  EXPECT_EQ(fuse_quantized_gemms(g), 0);
  EXPECT_EQ(node_writing(g, "m").op_type, "Gemm");
}

TEST(QuantizedUnitsTest, AConcatOfDequantizedInputsBecomesOneQLinearConcat) {
  Graph g;
  Attributes axis;
  axis.set("axis", std::int64_t{1});
  std::vector<ValueId> parts;
  for (const char* name : {"a", "b"}) {
    const ValueId q = g.add_input(std::string(name) + "q", TensorType{DType::kUInt8, {1, 2, 3, 3}});
    const ValueId f = g.add_value(name, f32({1, 2, 3, 3}));
    g.add_node("DequantizeLinear",
               {q, g.add_constant(std::string(name) + "s", values<float>({}, {0.5f})),
                g.add_constant(std::string(name) + "z", values<std::uint8_t>({}, {7}))},
               {f});
    parts.push_back(f);
  }
  const ValueId c = g.add_value("c", f32({1, 4, 3, 3}));
  const ValueId y = g.add_value("y", TensorType{DType::kUInt8, {1, 4, 3, 3}});
  g.add_node("Concat", parts, {c}, axis);
  g.add_node("QuantizeLinear", {c, g.add_constant("ys", values<float>({}, {0.25f}))}, {y});
  g.add_output(y);
  EXPECT_EQ(fuse_quantized_concats(g), 1);
  ASSERT_EQ(g.num_nodes(), 1u);
  const Node& concat = node_writing(g, "y");
  EXPECT_EQ(concat.op_type, "QLinearConcat");
  EXPECT_EQ(concat.domain, "com.microsoft");
  ASSERT_EQ(concat.inputs.size(), 8u);
  EXPECT_EQ(g.value(concat.inputs[2]).name, "aq");
  EXPECT_EQ(g.value(concat.inputs[5]).name, "bq");
  EXPECT_EQ(concat.attributes.get_int("axis", 0), 1);
}

// xq u8[1,2,4,4] -DQ(0.5, 3)-> x -OP-> f -QuantizeLinear(0.25, 10)-> y.
struct QdqUnary {
  Graph g;
  ValueId xq = g.add_input("xq", TensorType{DType::kUInt8, {1, 2, 4, 4}});
  ValueId x = g.add_value("x", f32({1, 2, 4, 4}));

  QdqUnary(const char* op, Shape out, Attributes attributes = {}) {
    g.add_node("DequantizeLinear",
               {xq, g.add_constant("xs", values<float>({}, {0.5f})),
                g.add_constant("xz", values<std::uint8_t>({}, {3}))},
               {x});
    const ValueId f = g.add_value("f", f32(out));
    g.add_node(op, {x}, {f}, std::move(attributes));
    const ValueId y = g.add_value("y", TensorType{DType::kUInt8, out});
    g.add_node("QuantizeLinear",
               {f, g.add_constant("ys", values<float>({}, {0.25f})),
                g.add_constant("yz", values<std::uint8_t>({}, {10}))},
               {y});
    g.add_output(y);
  }
};

TEST(QuantizedUnitsTest,
     QdqSigmoidLeakyReluHardSwishHardSigmoidSoftmaxAndAveragePoolingBecomeTheirQLinearOps) {
  Attributes leaky;
  leaky.set("alpha", 0.2f);
  Attributes window;
  window.set("kernel_shape", std::vector<std::int64_t>{2, 2});
  window.set("strides", std::vector<std::int64_t>{2, 2});
  struct Case {
    const char* op;
    Shape out;
    Attributes attributes;
    const char* fused;
  };
  for (const Case& c : {Case{"Sigmoid", {1, 2, 4, 4}, {}, "QLinearSigmoid"},
                        Case{"LeakyRelu", {1, 2, 4, 4}, leaky, "QLinearLeakyRelu"},
                        Case{"HardSwish", {1, 2, 4, 4}, {}, "QLinearHardSwish"},
                        Case{"HardSigmoid", {1, 2, 4, 4}, leaky, "QLinearHardSigmoid"},
                        Case{"Softmax", {1, 2, 4, 4}, {}, "QLinearSoftmax"},
                        Case{"GlobalAveragePool", {1, 2, 1, 1}, {}, "QLinearGlobalAveragePool"},
                        Case{"AveragePool", {1, 2, 2, 2}, window, "QLinearAveragePool"}}) {
    QdqUnary q(c.op, c.out, c.attributes);
    EXPECT_EQ(fuse_quantized_unaries(q.g), 1) << c.op;
    ASSERT_EQ(q.g.num_nodes(), 1u) << c.op;
    const Node& fused = node_writing(q.g, "y");
    EXPECT_EQ(fused.op_type, c.fused);
    // ONNX Runtime has no quantized hard swish: collage's own domain.
    const bool own = std::string(c.op) == "HardSwish" || std::string(c.op) == "HardSigmoid";
    EXPECT_EQ(fused.domain, own ? "collage" : "com.microsoft");
    EXPECT_EQ(q.g.other_opsets.count(fused.domain), 1u);
    ASSERT_EQ(fused.inputs.size(), 5u);
    EXPECT_EQ(q.g.value(fused.inputs[0]).name, "xq");
    EXPECT_EQ(q.g.value(fused.inputs[3]).name, "ys");
    // A QLinearSoftmax also records its Softmax's opset, which decides what its axis means.
    const bool softmax = std::string(c.op) == "Softmax";
    EXPECT_EQ(fused.attributes.all().size(), c.attributes.all().size() + (softmax ? 1 : 0)) << c.op;
    if (softmax) EXPECT_EQ(fused.attributes.get_int("opset", 0), q.g.opset);
  }
}

TEST(QuantizedUnitsTest, ADilatedAveragePoolStaysFloat) {
  Attributes window;
  window.set("kernel_shape", std::vector<std::int64_t>{2, 2});
  window.set("dilations", std::vector<std::int64_t>{2, 2});
  QdqUnary q("AveragePool", {1, 2, 2, 2}, window);
  EXPECT_EQ(fuse_quantized_unaries(q.g), 0);
  EXPECT_EQ(q.g.num_nodes(), 3u);
}

// xq u8[1,2,4,4] -DQ(s, z)-> Resize (linear, x2) -QuantizeLinear(s', z')-> y.
Graph qdq_resize(float y_scale, const std::string& coordinates) {
  Graph g;
  g.opset = 13;
  const ValueId xq = g.add_input("xq", TensorType{DType::kUInt8, {1, 2, 4, 4}});
  const ValueId scale = g.add_constant("s", values<float>({}, {0.5f}));
  const ValueId zero = g.add_constant("z", values<std::uint8_t>({}, {3}));
  const ValueId x = g.add_value("x", f32({1, 2, 4, 4}));
  g.add_node("DequantizeLinear", {xq, scale, zero}, {x});
  const ValueId f = g.add_value("f", f32({1, 2, 8, 8}));
  Attributes linear;
  linear.set("mode", std::string("linear"));
  linear.set("coordinate_transformation_mode", coordinates);
  g.add_node("Resize",
             {x, kNoValue, g.add_constant("scales", values<float>({4}, {1.0f, 1.0f, 2.0f, 2.0f}))},
             {f}, linear);
  const ValueId y = g.add_value("y", TensorType{DType::kUInt8, {1, 2, 8, 8}});
  g.add_node("QuantizeLinear",
             {f, g.add_constant("ys", values<float>({}, {y_scale})),
              g.add_constant("yz", values<std::uint8_t>({}, {3}))},
             {y});
  g.add_output(y);
  return g;
}

TEST(QuantizedUnitsTest, AResizeBetweenAPairOfTheSameParametersResizesTheQuantizedValues) {
  Graph g = qdq_resize(0.5f, "half_pixel");
  EXPECT_EQ(move_quantized_values(g), 1);
  ASSERT_EQ(g.num_nodes(), 1u);
  const Node& resize = node_writing(g, "y");
  EXPECT_EQ(resize.op_type, "Resize");
  EXPECT_EQ(g.value(resize.inputs[0]).name, "xq");
}

TEST(QuantizedUnitsTest, AResizeThatRequantizesOrCropsStaysFloat) {
  Graph requantizing = qdq_resize(0.25f, "half_pixel");
  EXPECT_EQ(move_quantized_values(requantizing), 0);
  // tf_crop_and_resize writes its extrapolation value, a real number.
  Graph cropping = qdq_resize(0.5f, "tf_crop_and_resize");
  EXPECT_EQ(move_quantized_values(cropping), 0);
}

TEST(QuantizedUnitsTest, AQdqProductBecomesOneQLinearMul) {
  Graph g;
  std::vector<ValueId> factors;
  for (const char* name : {"a", "b"}) {
    const ValueId q = g.add_input(std::string(name) + "q", TensorType{DType::kInt8, {1, 3}});
    const ValueId f = g.add_value(name, f32({1, 3}));
    g.add_node("DequantizeLinear",
               {q, g.add_constant(std::string(name) + "s", values<float>({}, {0.5f})),
                g.add_constant(std::string(name) + "z", values<std::int8_t>({}, {-2}))},
               {f});
    factors.push_back(f);
  }
  const ValueId m = g.add_value("m", f32({1, 3}));
  const ValueId y = g.add_value("y", TensorType{DType::kInt8, {1, 3}});
  g.add_node("Mul", factors, {m});
  g.add_node("QuantizeLinear",
             {m, g.add_constant("ys", values<float>({}, {0.25f})),
              g.add_constant("yz", values<std::int8_t>({}, {0}))},
             {y});
  g.add_output(y);
  EXPECT_EQ(fuse_quantized_adds(g), 0);
  EXPECT_EQ(fuse_quantized_muls(g), 1);
  ASSERT_EQ(g.num_nodes(), 1u);
  const Node& mul = node_writing(g, "y");
  EXPECT_EQ(mul.op_type, "QLinearMul");
  ASSERT_EQ(mul.inputs.size(), 8u);
  EXPECT_EQ(g.value(mul.inputs[0]).name, "aq");
  EXPECT_EQ(g.value(mul.inputs[3]).name, "bq");
}

}  // namespace
}  // namespace collage
