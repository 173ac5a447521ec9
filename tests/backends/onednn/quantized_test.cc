// oneDNN's int8 kernels against the native reference: within one
// quantization step of the output for the (transposed) convolution, matmul, concat,
// additions, products and averages (oneDNN scales in float32 where the
// reference computes in double or in another order), exactly for the max
// pooling.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "backends/onednn/onednn_test_util.h"
#include "backends/quantized_graphs.h"
#include "collage/backends/onednn/op_support.h"

namespace collage::onednn_test {
namespace {

using testing::largest_difference;
using testing::qconv_graph;
using testing::QConvCase;
using testing::qlinear_binary_graph;
using testing::qlinear_unary_graph;
using testing::qmatmul_graph;
using testing::random_eight_bit_inputs;
using testing::random_integers;
using testing::scalar_of;

class QLinearConvTest : public ::testing::TestWithParam<QConvCase> {};

TEST_P(QLinearConvTest, IsWithinOneStepOfTheReference) {
  if (!onednn::int8_products_exact())
    GTEST_SKIP() << "no VNNI: oneDNN leaves int8 products to native";
  const Graph g = qconv_graph(GetParam());
  ASSERT_TRUE(onednn_backend().supports(g, g.node(0)));
  const std::vector<Tensor> inputs = random_eight_bit_inputs(g, 3);
  const std::vector<Tensor> got = run_onednn(g, inputs, 2);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_LE(largest_difference(got[0], run_reference(g, inputs)[0]), 1);
}

INSTANTIATE_TEST_SUITE_P(Shapes, QLinearConvTest, ::testing::ValuesIn(testing::qconv_cases()),
                         [](const auto& info) { return info.param.name; });

class QLinearConvTransposeTest : public ::testing::TestWithParam<QConvCase> {};

TEST_P(QLinearConvTransposeTest, IsWithinOneStepOfTheReference) {
  if (!onednn::int8_products_exact())
    GTEST_SKIP() << "no VNNI: oneDNN leaves int8 products to native";
  const Graph g = testing::qconv_transpose_graph(GetParam());
  ASSERT_TRUE(onednn_backend().supports(g, g.node(0)));
  const std::vector<Tensor> inputs = random_eight_bit_inputs(g, 3);
  const std::vector<Tensor> got = run_onednn(g, inputs, 2);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_LE(largest_difference(got[0], run_reference(g, inputs)[0]), 1);
}

INSTANTIATE_TEST_SUITE_P(Shapes, QLinearConvTransposeTest,
                         ::testing::ValuesIn(testing::qconv_transpose_cases()),
                         [](const auto& info) { return info.param.name; });

TEST(QLinearConvClaimTest, ANonzeroWeightZeroPointIsNotClaimed) {
  QConvCase c{"", 8, 8, 1, 1, 6, true, false, false, false};
  Graph g = qconv_graph(c);
  Value& w_zero = g.value(g.node(0).input(5));
  Tensor zero_points = Tensor::zeros(TensorType{DType::kInt8, {8}});
  zero_points.data<std::int8_t>()[3] = 1;
  w_zero.constant = zero_points;
  EXPECT_FALSE(onednn_backend().supports(g, g.node(0)));
}

TEST(QuantizedPoolTest, MaxPoolOfEightBitValuesIsExact) {
  for (DType type : {DType::kUInt8, DType::kInt8}) {
    const Graph g = testing::eight_bit_max_pool_graph(type);
    ASSERT_TRUE(onednn_backend().supports(g, g.node(0)));
    const std::vector<Tensor> inputs = random_eight_bit_inputs(g, 11);
    EXPECT_EQ(largest_difference(run_onednn(g, inputs)[0], run_reference(g, inputs)[0]), 0)
        << dtype_name(type);
  }
}

TEST(QLinearMatMulTest, QLinearMatMulAndQGemmAreWithinOneStepOfTheReference) {
  if (!onednn::int8_products_exact())
    GTEST_SKIP() << "no VNNI: oneDNN leaves int8 products to native";
  for (const auto& [gemm, float_output] :
       {std::pair{false, false}, std::pair{true, false}, std::pair{true, true}}) {
    const Graph g = qmatmul_graph(gemm, float_output);
    ASSERT_TRUE(onednn_backend().supports(g, g.node(0))) << gemm << float_output;
    const std::vector<Tensor> inputs = random_eight_bit_inputs(g, 4);
    const Tensor got = run_onednn(g, inputs, 2)[0];
    const Tensor want = run_reference(g, inputs)[0];
    if (float_output) {
      // Exact int32 sums, each scaled once in float32 on both sides.
      EXPECT_TRUE(all_close(got, want, 1e-6));
    } else {
      EXPECT_LE(largest_difference(got, want), 1) << gemm;
    }
  }
}

TEST(QLinearConvTest, EightBitEdgesStoredChannelsLastGiveTheSameValues) {
  if (!onednn::int8_products_exact())
    GTEST_SKIP() << "no VNNI: oneDNN leaves int8 products to native";
  const Graph g = qconv_graph(QConvCase{"", 8, 16, 1, 1, 9, true, true, false, false});
  testing::expect_eight_bit_edges_within_one_step(onednn_backend(), g, EdgeLayout::kChannelsLast,
                                                  2);
  EXPECT_TRUE(onednn_backend().accepts_edge_layout(EdgeLayout::kChannelsLast));
  // Blocked layouts hold float32 only.
  EXPECT_FALSE(edge_layout_fits(EdgeLayout::kBlocked16, g.type(g.inputs()[0])));
  EXPECT_TRUE(edge_layout_fits(EdgeLayout::kChannelsLast, g.type(g.inputs()[0])));
}

// Two parts of other scales and zero points along the channels.
TEST(QLinearConcatTest, PartsAreRequantizedWithinOneStepOfTheReference) {
  Graph g;
  g.opset = 13;
  g.other_opsets["com.microsoft"] = 1;
  const ValueId a = g.add_input("a", TensorType{DType::kUInt8, {1, 5, 6, 6}});
  const ValueId b = g.add_input("b", TensorType{DType::kUInt8, {1, 11, 6, 6}});
  const ValueId y = g.add_value("y", TensorType{DType::kUInt8, {1, 16, 6, 6}});
  const NodeId node = g.add_node("QLinearConcat",
                                 {g.add_constant("ys", scalar_of<float>(0.05f)),
                                  g.add_constant("yz", scalar_of<std::uint8_t>(20)), a,
                                  g.add_constant("as", scalar_of<float>(0.03f)),
                                  g.add_constant("az", scalar_of<std::uint8_t>(128)), b,
                                  g.add_constant("bs", scalar_of<float>(0.07f)),
                                  g.add_constant("bz", scalar_of<std::uint8_t>(3))},
                                 {y}, attrs({{"axis", std::int64_t{1}}}), "concat");
  g.node(node).domain = "com.microsoft";
  g.add_output(y);
  ASSERT_TRUE(onednn_backend().supports(g, g.node(0)));
  const std::vector<Tensor> inputs = random_eight_bit_inputs(g, 8);
  EXPECT_LE(largest_difference(run_onednn(g, inputs)[0], run_reference(g, inputs)[0]), 1);
}

// Every node claimed, and the 8-bit output within one step of the reference's.
void expect_within_one_step(const Graph& g, std::uint32_t seed) {
  testing::expect_backend_within_one_step(onednn_backend(), g, seed, 2);
}

TEST(QLinearBinaryTest, AddAndMulAreWithinOneStepOfTheReference) {
  for (const char* op : {"QLinearAdd", "QLinearMul"}) {
    for (bool constant_b : {false, true}) {
      SCOPED_TRACE(std::string(op) + (constant_b ? " by a per-channel constant" : ""));
      expect_within_one_step(qlinear_binary_graph(op, constant_b), 6);
    }
  }
}

TEST(QLinearBinaryTest, AProductByAnOperandOfZeroPoint0IsWithinOneStep) {
  // That operand's 8-bit values are multiplied directly, with no
  // dequantizing reorder: b's zero point, a's (the operands swap), both.
  for (const std::vector<std::size_t>& zeroed :
       {std::vector<std::size_t>{5}, std::vector<std::size_t>{2}, std::vector<std::size_t>{2, 5}}) {
    for (bool constant_b : {false, true}) {
      Graph g = qlinear_binary_graph("QLinearMul", constant_b);
      for (std::size_t zero_point : zeroed) {
        g.value(g.node(0).input(zero_point)).constant = scalar_of<std::uint8_t>(0);
      }
      SCOPED_TRACE(::testing::Message() << zeroed.size() << zeroed[0] << constant_b);
      expect_within_one_step(g, 9);
    }
  }
}

TEST(QLinearBinaryTest, AnInputBroadcastOnTheFirstSideIsSwapped) {
  Graph g = qlinear_binary_graph("QLinearAdd", true);
  Node& add = g.node(0);
  std::swap(add.inputs[0], add.inputs[3]);
  std::swap(add.inputs[1], add.inputs[4]);
  std::swap(add.inputs[2], add.inputs[5]);
  expect_within_one_step(g, 10);
}

TEST(QLinearUnaryTest, SigmoidLeakyReluHardSwishAndHardSigmoidRunInFloatWithinOneStep) {
  expect_within_one_step(qlinear_unary_graph("QLinearSigmoid", {1, 8, 7, 7}, 1.0f / 256.0f), 7);
  expect_within_one_step(qlinear_unary_graph("QLinearSigmoid", {1, 8, 7, 7}, 1.0f / 255.0f), 8);
  Graph leaky = qlinear_unary_graph("QLinearLeakyRelu", {1, 8, 7, 7}, 0.04f);
  leaky.node(0).attributes.set("alpha", 0.2f);
  expect_within_one_step(leaky, 8);
  Graph hard_swish = qlinear_unary_graph("QLinearHardSwish", {1, 8, 7, 7}, 0.04f);
  hard_swish.node(0).domain = "collage";
  expect_within_one_step(hard_swish, 9);
  Graph hard_sigmoid = qlinear_unary_graph("QLinearHardSigmoid", {1, 8, 7, 7}, 1.0f / 255.0f);
  hard_sigmoid.node(0).domain = "collage";
  hard_sigmoid.node(0).attributes.set("alpha", 1.0f / 6.0f);
  expect_within_one_step(hard_sigmoid, 10);
}

TEST(QLinearUnaryTest, SoftmaxWritesEightBitValuesWithinOneStep) {
  // Over the last axis, and over the channels (not innermost).
  for (const std::int64_t axis : {-1, 1}) {
    Graph g = qlinear_unary_graph("QLinearSoftmax", {1, 8, 7, 7}, 1.0f / 256.0f);
    g.node(0).attributes.set("axis", axis);
    g.node(0).attributes.set("opset", std::int64_t{13});
    ASSERT_TRUE(onednn_backend().supports(g, g.node(0))) << axis;
    const std::vector<Tensor> inputs = random_eight_bit_inputs(g, 5);
    const std::vector<Tensor> got = run_onednn(g, inputs, 2);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_LE(largest_difference(got[0], run_reference(g, inputs)[0]), 1) << axis;
  }
}

TEST(QLinearUnaryTest, ASoftmaxIntoAnOutputZeroPointIsNotClaimed) {
  Graph g = qlinear_unary_graph("QLinearSoftmax", {1, 8, 7, 7}, 1.0f / 256.0f);
  g.value(g.node(0).input(4)).constant = scalar_of<std::uint8_t>(3);
  EXPECT_FALSE(onednn_backend().supports(g, g.node(0)));
}

TEST(QuantizedPoolTest, QLinearAveragesAreWithinOneStepOfTheReference) {
  expect_within_one_step(qlinear_unary_graph("QLinearGlobalAveragePool", {1, 8, 1, 1}, 0.01f), 7);
  // 7x7, 3x3 windows, strides 2, pads 1: 4x4, padding not counted.
  Graph g = qlinear_unary_graph("QLinearAveragePool", {1, 8, 4, 4}, 0.03f);
  g.node(0).attributes = attrs({{"kernel_shape", std::vector<std::int64_t>{3, 3}},
                                {"strides", std::vector<std::int64_t>{2, 2}},
                                {"pads", std::vector<std::int64_t>{1, 1, 1, 1}}});
  expect_within_one_step(g, 13);
}

TEST(QuantizedPoolTest, AnAverageCountingPaddingIsClaimedOnlyWithAZeroPointOf0) {
  // oneDNN's padding is the integer 0, which stands for a real 0 only when
  // the input's zero point is 0.
  Graph g = qlinear_unary_graph("QLinearAveragePool", {1, 8, 4, 4}, 0.03f);
  g.node(0).attributes = attrs({{"kernel_shape", std::vector<std::int64_t>{3, 3}},
                                {"strides", std::vector<std::int64_t>{2, 2}},
                                {"pads", std::vector<std::int64_t>{1, 1, 1, 1}},
                                {"count_include_pad", std::int64_t{1}}});
  EXPECT_FALSE(onednn_backend().supports(g, g.node(0)));
  g.value(g.node(0).input(2)).constant = scalar_of<std::uint8_t>(0);
  expect_within_one_step(g, 14);
}

// x (float32) -> QuantizeLinear -> q -> DequantizeLinear -> out, with q an
// output too, of `type` with one scale and zero point.
Graph quantize_round_trip_graph(DType type) {
  Graph g;
  g.opset = 13;
  const ValueId x = g.add_input("x", f32({1, 8, 6, 6}));
  const ValueId scale = g.add_constant("scale", scalar_of<float>(0.05f));
  const ValueId zero = type == DType::kUInt8 ? g.add_constant("zero", scalar_of<std::uint8_t>(128))
                                             : g.add_constant("zero", scalar_of<std::int8_t>(-3));
  const ValueId q = g.add_value("q", TensorType{type, {1, 8, 6, 6}});
  const ValueId out = g.add_value("out", f32({1, 8, 6, 6}));
  g.add_node("QuantizeLinear", {x, scale, zero}, {q}, {}, "quantize");
  g.add_node("DequantizeLinear", {q, scale, zero}, {out}, {}, "dequantize");
  g.add_output(q);
  g.add_output(out);
  return g;
}

TEST(QuantizeLinearTest, QuantizeAndDequantizeAreWithinOneStepOfTheReference) {
  for (DType type : {DType::kUInt8, DType::kInt8}) {
    const Graph g = quantize_round_trip_graph(type);
    for (const Node& node : g.nodes()) {
      ASSERT_TRUE(onednn_backend().supports(g, node)) << node.op_type;
    }
    // Past the 8-bit range on both sides: saturation.
    const std::vector<Tensor> inputs = random_inputs(g, 12, -8.0f, 8.0f);
    const std::vector<Tensor> got = run_onednn(g, inputs, 2);
    const std::vector<Tensor> want = run_reference(g, inputs);
    ASSERT_EQ(got.size(), 2u);
    EXPECT_LE(largest_difference(got[0], want[0]), 1) << dtype_name(type);
    EXPECT_TRUE(all_close(got[1], want[1], 0.05f * 1.001f)) << dtype_name(type);
  }
}

TEST(QuantizeLinearTest, AScalePerAxisIsNotClaimed) {
  Graph g = quantize_round_trip_graph(DType::kUInt8);
  Node& quantize = g.node(0);
  quantize.inputs[1] = g.add_constant(
      "scales", Tensor::from_vector<float>({0.1f, 0.2f, 0.1f, 0.2f, 0.1f, 0.2f, 0.1f, 0.2f}, {8}));
  quantize.inputs[2] = g.add_constant("zeros", Tensor::zeros(TensorType{DType::kUInt8, {8}}));
  EXPECT_FALSE(onednn_backend().supports(g, g.node(0)));
  EXPECT_TRUE(onednn_backend().supports(g, g.node(1)));
}

TEST(QLinearBinaryTest, ChannelsLastEdgesGiveTheSameValues) {
  for (const char* op : {"QLinearAdd", "QLinearMul"}) {
    for (bool zero_b : {false, true}) {
      Graph g = qlinear_binary_graph(op, false);
      if (zero_b) g.value(g.node(0).input(5)).constant = scalar_of<std::uint8_t>(0);
      SCOPED_TRACE(::testing::Message() << op << zero_b);
      testing::expect_eight_bit_edges_within_one_step(onednn_backend(), g,
                                                      EdgeLayout::kChannelsLast, 2);
    }
  }
  Graph hard_sigmoid = qlinear_unary_graph("QLinearHardSigmoid", {1, 8, 7, 7}, 1.0f / 255.0f);
  hard_sigmoid.node(0).domain = "collage";
  hard_sigmoid.node(0).attributes.set("alpha", 1.0f / 6.0f);
  testing::expect_eight_bit_edges_within_one_step(onednn_backend(), hard_sigmoid,
                                                  EdgeLayout::kChannelsLast, 2);
}

TEST(QuantizeLinearTest, ScalarsAreNotClaimed) {
  Graph quantize;
  quantize.opset = 13;
  const ValueId x = quantize.add_input("x", f32({}));
  const ValueId q = quantize.add_value("q", TensorType{DType::kUInt8, {}});
  quantize.add_node("QuantizeLinear",
                    {x, quantize.add_constant("s", scalar_of<float>(0.1f)),
                     quantize.add_constant("z", scalar_of<std::uint8_t>(3))},
                    {q}, {}, "quantize");
  quantize.add_output(q);
  EXPECT_FALSE(onednn_backend().supports(quantize, quantize.node(0)));
  Graph sigmoid = qlinear_unary_graph("QLinearSigmoid", {1, 8, 7, 7}, 1.0f / 256.0f);
  sigmoid.value(sigmoid.node(0).input(0)).type.shape = {};
  sigmoid.value(sigmoid.node(0).outputs[0]).type.shape = {};
  EXPECT_FALSE(onednn_backend().supports(sigmoid, sigmoid.node(0)));
}

}  // namespace
}  // namespace collage::onednn_test
