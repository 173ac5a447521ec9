// XNNPACK's int8 kernels against the native reference: every quantized op
// within one quantization step of the output (XNNPACK requantizes in float32
// where the reference computes in double), uint8 values included (held as
// int8 shifted by 128 at the edges), and the ops it must not claim.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "backends/quantized_graphs.h"
#include "backends/xnnpack/reference_check.h"

namespace collage::testing {
namespace {

std::vector<Tensor> run_xnnpack(const Graph& graph, const std::vector<Tensor>& inputs,
                                int threads = 1) {
  CompileOptions options;
  options.threads = threads;
  auto kernel = xnnpack_backend().compile(graph, options);
  EXPECT_TRUE(static_cast<bool>(kernel)) << (kernel ? "" : kernel.error());
  if (!kernel) return {};
  return run(**kernel, graph, inputs);
}

// Every node claimed, and the partition's 8-bit output within one step of
// the reference's.
void expect_within_one_step(const Graph& graph, std::uint32_t seed, int threads = 1) {
  expect_backend_within_one_step(xnnpack_backend(), graph, seed, threads);
}

class XnnpackQLinearConvTest : public ::testing::TestWithParam<QConvCase> {};

TEST_P(XnnpackQLinearConvTest, IsWithinOneStepOfTheReference) {
  expect_within_one_step(qconv_graph(GetParam()), 3);
}

TEST_P(XnnpackQLinearConvTest, IsWithinOneStepOfTheReferenceOnTwoThreads) {
  expect_within_one_step(qconv_graph(GetParam()), 5, 2);
}

INSTANTIATE_TEST_SUITE_P(Shapes, XnnpackQLinearConvTest, ::testing::ValuesIn(qconv_cases()),
                         [](const auto& info) { return info.param.name; });

// This XNNPACK's int8 deconvolution takes one weight scale: the per-tensor cases.
class XnnpackQLinearConvTransposeTest : public ::testing::TestWithParam<QConvCase> {};

TEST_P(XnnpackQLinearConvTransposeTest, IsWithinOneStepOfTheReference) {
  expect_within_one_step(qconv_transpose_graph(GetParam()), 3, 2);
}

std::vector<QConvCase> per_tensor_transpose_cases() {
  std::vector<QConvCase> cases;
  for (const QConvCase& c : qconv_transpose_cases()) {
    if (!c.per_channel) cases.push_back(c);
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Shapes, XnnpackQLinearConvTransposeTest,
                         ::testing::ValuesIn(per_tensor_transpose_cases()),
                         [](const auto& info) { return info.param.name; });

TEST(XnnpackQuantizedClaimTest, AConvTransposeWithAScalePerChannelIsNotClaimed) {
  const Graph g = qconv_transpose_graph(qconv_transpose_cases()[1]);
  EXPECT_FALSE(xnnpack_backend().supports(g, g.node(0)));
}

TEST(XnnpackQuantizedClaimTest, ANonzeroWeightZeroPointIsNotClaimed) {
  Graph g = qconv_graph(QConvCase{"", 8, 8, 1, 1, 6, true, false, false, false});
  Tensor zero_points = Tensor::zeros(TensorType{DType::kInt8, {8}});
  zero_points.data<std::int8_t>()[3] = 1;
  g.value(g.node(0).input(5)).constant = zero_points;
  EXPECT_FALSE(xnnpack_backend().supports(g, g.node(0)));
}

TEST(XnnpackQuantizedClaimTest, ARequantizationOf256OrMoreIsNotClaimed) {
  Graph g = qconv_graph(QConvCase{"", 8, 8, 1, 1, 6, false, false, false, false});
  // x_scale 0.04 * w_scale 0.002 / y_scale: 256 and above fail this XNNPACK.
  g.value(g.node(0).input(6)).constant = scalar_of<float>(0.04f * 0.002f / 300.0f);
  EXPECT_FALSE(xnnpack_backend().supports(g, g.node(0)));
}

TEST(XnnpackQLinearMatMulTest, QGemmAndQLinearMatMulAreWithinOneStepOfTheReference) {
  expect_within_one_step(qmatmul_graph(true, false), 4);
  expect_within_one_step(qmatmul_graph(false, false, {6, 32}), 4);
}

TEST(XnnpackQLinearMatMulTest, AFloatOutputOrABatchOfMatricesIsNotClaimed) {
  const Graph float_output = qmatmul_graph(true, true);
  EXPECT_FALSE(xnnpack_backend().supports(float_output, float_output.node(0)));
  const Graph batched = qmatmul_graph(false, false, {2, 3, 32});
  EXPECT_FALSE(xnnpack_backend().supports(batched, batched.node(0)));
}

TEST(XnnpackQLinearBinaryTest, AddAndMulAreWithinOneStepOfTheReference) {
  for (const char* op : {"QLinearAdd", "QLinearMul"}) {
    for (bool constant_b : {false, true}) {
      SCOPED_TRACE(std::string(op) + (constant_b ? " by a constant" : ""));
      expect_within_one_step(qlinear_binary_graph(op, constant_b), 6);
    }
  }
}

TEST(XnnpackQLinearUnaryTest, GlobalAveragePoolAndSigmoidAreWithinOneStepOfTheReference) {
  expect_within_one_step(qlinear_unary_graph("QLinearGlobalAveragePool", {1, 8, 1, 1}, 0.01f), 7);
  expect_within_one_step(qlinear_unary_graph("QLinearSigmoid", {1, 8, 7, 7}, 1.0f / 256.0f), 7);
}

TEST(XnnpackQLinearUnaryTest,
     ASigmoidIntoAnotherScaleALeakyReluAHardSwishAndAHardSigmoidRunInFloatWithinOneStep) {
  // This XNNPACK's int8 sigmoid writes scale 1/256 only and it has no int8
  // leaky relu: both run in float32 between converts.
  expect_within_one_step(qlinear_unary_graph("QLinearSigmoid", {1, 8, 7, 7}, 1.0f / 255.0f), 8);
  Graph leaky = qlinear_unary_graph("QLinearLeakyRelu", {1, 8, 7, 7}, 0.04f);
  leaky.node(0).attributes.set("alpha", 0.2f);
  expect_within_one_step(leaky, 8, 2);
  Graph hard_swish = qlinear_unary_graph("QLinearHardSwish", {1, 8, 7, 7}, 0.04f);
  hard_swish.node(0).domain = "collage";
  expect_within_one_step(hard_swish, 9, 2);
  Graph hard_sigmoid = qlinear_unary_graph("QLinearHardSigmoid", {1, 8, 7, 7}, 1.0f / 255.0f);
  hard_sigmoid.node(0).domain = "collage";
  hard_sigmoid.node(0).attributes.set("alpha", 1.0f / 6.0f);
  expect_within_one_step(hard_sigmoid, 10, 2);
}

TEST(XnnpackQuantizedPoolTest, QLinearAveragePoolRunsInFloatWithinOneStep) {
  // 7x7, 3x3 windows, strides 2, pads 1: 4x4, with and without the pads counted.
  for (std::int64_t count_pads : {0, 1}) {
    Graph g = qlinear_unary_graph("QLinearAveragePool", {1, 8, 4, 4}, 0.03f);
    g.node(0).attributes = attrs({{"kernel_shape", std::vector<std::int64_t>{3, 3}},
                                  {"strides", std::vector<std::int64_t>{2, 2}},
                                  {"pads", std::vector<std::int64_t>{1, 1, 1, 1}},
                                  {"count_include_pad", count_pads}});
    SCOPED_TRACE(count_pads);
    expect_within_one_step(g, 13, 2);
  }
}

TEST(XnnpackQuantizedPoolTest, MaxPoolOfEightBitValuesOnItsOwnIsExact) {
  for (DType type : {DType::kUInt8, DType::kInt8}) {
    const Graph g = eight_bit_max_pool_graph(type);
    ASSERT_TRUE(xnnpack_backend().supports(g, g.node(0))) << dtype_name(type);
    const std::vector<Tensor> inputs = random_eight_bit_inputs(g, 11);
    const std::vector<Tensor> got = run_xnnpack(g, inputs);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(largest_difference(got[0], run_reference(g, inputs)[0]), 0) << dtype_name(type);
  }
}

TEST(XnnpackQuantizedPoolTest, BilinearResizeOfEightBitValuesIsWithinOneStep) {
  for (DType type : {DType::kUInt8, DType::kInt8}) {
    Graph g;
    g.opset = 13;
    const ValueId x = g.add_input("x", TensorType{type, {1, 8, 6, 6}});
    const ValueId y = g.add_value("y", TensorType{type, {1, 8, 12, 12}});
    g.add_node(
        "Resize",
        {x, kNoValue, g.add_constant("scales", Tensor::from_vector<float>({1, 1, 2, 2}, {4}))}, {y},
        attrs({{"mode", std::string("linear")}}), "resize");
    g.add_output(y);
    SCOPED_TRACE(dtype_name(type));
    expect_within_one_step(g, 15, 2);
  }
}

// float x -> QuantizeLinear -> QLinearConv -> MaxPool over the whole image ->
// Flatten -> DequantizeLinear: one runtime from float32 to float32, int8
// inside (the pool's [1, 16, 1, 1] output reads the same in either layout).
TEST(XnnpackQuantizedChainTest, AQuantizedRegionBetweenFloatEdgesIsWithinOneOutputStep) {
  Graph g;
  g.opset = 13;
  const QuantizedConvStart start = add_quantized_conv(g, "y");
  const ValueId y = start.y;
  const ValueId pooled = g.add_value("pooled", TensorType{DType::kUInt8, {1, 16, 1, 1}});
  g.add_node("MaxPool", {y}, {pooled},
             attrs({{"kernel_shape", std::vector<std::int64_t>{8, 8}},
                    {"strides", std::vector<std::int64_t>{8, 8}}}),
             "pool");
  const ValueId flat = g.add_value("flat", TensorType{DType::kUInt8, {1, 16}});
  g.add_node("Flatten", {pooled}, {flat}, {}, "flatten");
  const ValueId out = g.add_value("out", f32({1, 16}));
  g.add_node("DequantizeLinear", {flat, start.y_scale, start.y_zero}, {out}, {}, "dequantize");
  g.add_output(out);
  for (const Node& node : g.nodes()) {
    ASSERT_TRUE(xnnpack_backend().supports(g, node)) << node.op_type;
  }
  const std::vector<Tensor> inputs = random_inputs(g, 9, -4.0f, 4.0f);
  const std::vector<Tensor> outputs = run_xnnpack(g, inputs, 2);
  ASSERT_EQ(outputs.size(), 1u);
  const Tensor& got = outputs[0];
  const Tensor want = run_reference(g, inputs)[0];
  const float step = start.step;
  float largest = 0.0f;
  for (std::int64_t i = 0; i < got.numel(); ++i) {
    largest = std::max(largest, std::abs(got.data<float>()[i] - want.data<float>()[i]));
  }
  EXPECT_LE(largest, step * 1.001f);
}

TEST(XnnpackQuantizedEdgeTest, EightBitEdgesStoredChannelsLastGiveTheSameValues) {
  // A convolution computes channels-last; an elementwise op follows its edges.
  const Graph conv = qconv_graph(QConvCase{"", 8, 16, 1, 1, 9, true, true, false, false});
  expect_eight_bit_edges_within_one_step(xnnpack_backend(), conv, EdgeLayout::kChannelsLast, 2);
  expect_eight_bit_edges_within_one_step(xnnpack_backend(), conv, EdgeLayout::kPlain, 1);
  const Graph add = qlinear_binary_graph("QLinearAdd", false);
  expect_eight_bit_edges_within_one_step(xnnpack_backend(), add, EdgeLayout::kChannelsLast, 1);
}

TEST(XnnpackQuantizedEdgeTest, ItsEightBitLayoutConversionFlipsUint8IntoInt8) {
  const TensorType type{DType::kUInt8, {1, 5, 3, 4}};
  const Tensor plain = random_integers<std::uint8_t>(type.shape, 2, 0, 255);
  Tensor stored = Tensor::allocate(type);
  auto into = xnnpack_backend().layout_conversion(type, EdgeLayout::kChannelsLast, false, 1);
  ASSERT_TRUE(into);
  into->run(plain.raw(), stored.raw());
  // What the kernel stages: NHWC bytes, each a uint8 minus 128 as int8.
  const Tensor nhwc = convert_edge_layout(plain, EdgeLayout::kChannelsLast, false);
  for (std::int64_t i = 0; i < type.numel(); ++i) {
    ASSERT_EQ(stored.data<std::uint8_t>()[i], nhwc.data<std::uint8_t>()[i] ^ 0x80) << i;
  }
}

TEST(XnnpackQuantizedChainTest, AConvolutionAndAnAddInOneRuntimeAreWithinTwoOutputSteps) {
  // The add reads the convolution's uint8 output as int8 shifted by 128 (the
  // convolution's channel-wise weights need the signed kernels); an add on
  // its own keeps uint8 (XnnpackQLinearBinaryTest).
  const Graph g = qconv_add_chain();
  for (const Node& node : g.nodes()) {
    ASSERT_TRUE(xnnpack_backend().supports(g, node)) << node.op_type;
  }
  const std::vector<Tensor> inputs = random_inputs(g, 10, -4.0f, 4.0f);
  const std::vector<Tensor> got = run_xnnpack(g, inputs, 2);
  ASSERT_EQ(got.size(), 1u);
  const Tensor want = run_reference(g, inputs)[0];
  float largest = 0.0f;
  for (std::int64_t i = 0; i < want.numel(); ++i) {
    largest = std::max(largest, std::abs(got[0].data<float>()[i] - want.data<float>()[i]));
  }
  // The convolution's one step (0.05, added twice) and the add's own
  // rounding: within two steps of the sum's scale, 0.09.
  EXPECT_LE(largest, 0.09f * 2.001f);
}

TEST(XnnpackQuantizedChainTest, AValueTwoOpsQuantizeDifferentlyFailsToCompileWithAReason) {
  // Two QLinearConvs reading x at different scales: one qint8 value cannot be both.
  Graph conv = qconv_graph(QConvCase{"", 8, 8, 1, 1, 6, true, false, false, false});
  Graph g = conv;
  const Node first = g.node(0);
  std::vector<ValueId> inputs = first.inputs;
  inputs[1] = g.add_constant("x_scale_2", scalar_of<float>(0.07f));
  const ValueId y2 = g.add_value("y2", g.type(first.outputs[0]));
  g.add_node("QLinearConv", inputs, {y2}, first.attributes, "conv2");
  g.add_output(y2);
  CompileOptions options;
  auto kernel = xnnpack_backend().compile(g, options);
  ASSERT_FALSE(static_cast<bool>(kernel));
  EXPECT_NE(kernel.error().find("two quantizations"), std::string::npos) << kernel.error();
}

}  // namespace
}  // namespace collage::testing
