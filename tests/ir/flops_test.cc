#include "collage/ir/flops.h"

#include <gtest/gtest.h>

#include "collage/ir/error.h"

namespace collage {
namespace {

TensorType f32(Shape shape) { return TensorType{DType::kFloat32, std::move(shape)}; }

TEST(FlopsTest, ConvCountsTwoFlopsPerMultiplyAccumulatePlusBias) {
  Graph g;
  ValueId x = g.add_input("x", f32({1, 3, 8, 8}));
  ValueId w = g.add_constant("w", Tensor::zeros(f32({16, 3, 3, 3})));
  ValueId b = g.add_constant("b", Tensor::zeros(f32({16})));
  ValueId y = g.add_value("y", f32({1, 16, 8, 8}));
  g.add_node("Conv", {x, w, b}, {y});
  // 1024 outputs, each 27 MACs, plus one bias add.
  EXPECT_EQ(node_flops(g, g.node(0)), 1024 * 27 * 2 + 1024);
}

// Every step multiplies the input and the state by every gate's weights,
// in each direction: 2 * steps * batch * directions * gates * hidden *
// (input + hidden).
TEST(FlopsTest, RecurrentLayersCountBothProductsOfEveryStepAndDirection) {
  Graph g;
  ValueId x = g.add_input("x", f32({7, 3, 5}));
  ValueId w = g.add_constant("w", Tensor::zeros(f32({2, 4 * 6, 5})));
  ValueId r = g.add_constant("r", Tensor::zeros(f32({2, 4 * 6, 6})));
  ValueId y = g.add_value("y", f32({7, 2, 3, 6}));
  g.add_node("LSTM", {x, w, r}, {y});
  EXPECT_EQ(node_flops(g, g.node(0)), 2 * 7 * 3 * 2 * 24 * (5 + 6));
}

TEST(FlopsTest, GroupedConvCountsOnlyItsGroupsChannels) {
  Graph g;
  ValueId x = g.add_input("x", f32({1, 8, 4, 4}));
  ValueId w = g.add_constant("w", Tensor::zeros(f32({8, 1, 3, 3})));
  ValueId y = g.add_value("y", f32({1, 8, 4, 4}));
  Attributes depthwise;
  depthwise.set("group", std::int64_t{8});
  g.add_node("Conv", {x, w}, {y}, depthwise);
  EXPECT_EQ(node_flops(g, g.node(0)), 128 * 9 * 2);
}

TEST(FlopsTest, ConvTransposeCountsProductsPerInputElement) {
  Graph g;
  ValueId x = g.add_input("x", f32({1, 4, 2, 2}));
  ValueId w = g.add_constant("w", Tensor::zeros(f32({4, 2, 4, 4})));
  ValueId y = g.add_value("y", f32({1, 2, 4, 4}));
  g.add_node("ConvTranspose", {x, w}, {y});
  EXPECT_EQ(node_flops(g, g.node(0)), 16 * 2 * 16 * 2);
}

TEST(FlopsTest, GemmHonoursTransA) {
  Graph g;
  ValueId a = g.add_input("a", f32({5, 3}));
  ValueId b = g.add_constant("b", Tensor::zeros(f32({5, 7})));
  ValueId y = g.add_value("y", f32({3, 7}));
  Attributes transposed;
  transposed.set("transA", std::int64_t{1});
  g.add_node("Gemm", {a, b}, {y}, transposed);
  EXPECT_EQ(node_flops(g, g.node(0)), 2 * 3 * 7 * 5);
}

TEST(FlopsTest, BatchedMatMulCountsEveryBatch) {
  Graph g;
  ValueId a = g.add_input("a", f32({4, 2, 8}));
  ValueId b = g.add_input("b", f32({4, 8, 3}));
  ValueId y = g.add_value("y", f32({4, 2, 3}));
  g.add_node("MatMul", {a, b}, {y});
  EXPECT_EQ(node_flops(g, g.node(0)), 2 * 24 * 8);
}

TEST(FlopsTest, ElementwiseOpsCountOnePerOutputElementAndReshapeIsFree) {
  Graph g;
  ValueId x = g.add_input("x", f32({2, 6}));
  ValueId r = g.add_value("r", f32({2, 6}));
  ValueId s = g.add_constant("s", Tensor::from_vector<std::int64_t>({12}, {1}));
  ValueId y = g.add_value("y", f32({12}));
  g.add_node("Relu", {x}, {r});
  g.add_node("Reshape", {r, s}, {y});
  g.add_output(y);
  EXPECT_EQ(node_flops(g, g.node(0)), 12);
  EXPECT_EQ(node_flops(g, g.node(1)), 0);
  EXPECT_EQ(graph_flops(g), 12);
}

TEST(FlopsTest, GeluAndSwishCountTheOpsOfTheChainsTheyReplace) {
  Graph g;
  ValueId x = g.add_input("x", f32({3, 4}));
  auto add = [&](const std::string& op, Attributes attributes) {
    ValueId y = g.add_value("y" + std::to_string(g.num_nodes()), f32({3, 4}));
    return g.add_node(op, {x}, {y}, std::move(attributes));
  };
  Attributes tanh_form;
  tanh_form.set("approximate", std::string("tanh"));
  Attributes alpha;
  alpha.set("alpha", 1.702f);
  EXPECT_EQ(node_flops(g, g.node(add("Gelu", {}))), 5 * 12);
  EXPECT_EQ(node_flops(g, g.node(add("Gelu", tanh_form))), 8 * 12);
  EXPECT_EQ(node_flops(g, g.node(add("Swish", {}))), 2 * 12);
  EXPECT_EQ(node_flops(g, g.node(add("Swish", alpha))), 3 * 12);
}

TEST(FlopsTest, ParameterCountSumsFloatConstantsNotShapes) {
  Graph g;
  g.add_constant("w", Tensor::zeros(f32({16, 3, 3, 3})));
  g.add_constant("b", Tensor::zeros(f32({16})));
  g.add_constant("shape", Tensor::from_vector<std::int64_t>({1, 2}, {2}));
  g.add_input("x", f32({100}));
  EXPECT_EQ(parameter_count(g), 16 * 27 + 16);
}

TEST(FlopsTest, ParameterCountTakesQuantizedWeightsAndTheirInt32Bias) {
  Graph g;
  auto scalar = [&](const char* name, DType dtype) {
    return g.add_constant(name, Tensor::zeros(TensorType{dtype, {}}));
  };
  const ValueId x = g.add_input("x", TensorType{DType::kUInt8, {1, 3, 8, 8}});
  const ValueId y = g.add_value("y", TensorType{DType::kUInt8, {1, 16, 6, 6}});
  g.add_node("QLinearConv",
             {x, scalar("xs", DType::kFloat32), scalar("xz", DType::kUInt8),
              g.add_constant("w", Tensor::zeros(TensorType{DType::kInt8, {16, 3, 3, 3}})),
              scalar("ws", DType::kFloat32), scalar("wz", DType::kInt8),
              scalar("ys", DType::kFloat32), scalar("yz", DType::kUInt8),
              g.add_constant("b", Tensor::zeros(TensorType{DType::kInt32, {16}}))},
             {y});
  g.add_constant("shape", Tensor::from_vector<std::int32_t>({1, 2}, {2}));
  // The weights and bias, and six one-element scales and zero points.
  EXPECT_EQ(parameter_count(g), 16 * 27 + 16 + 6);
}

// Each shape fits in int64, but 2 * M * N * K does not: the count used to
// wrap around to a negative number.
TEST(FlopsTest, AFlopCountThatOverflowsIsAnErrorNamingTheNode) {
  Graph g;
  ValueId a = g.add_input("a", f32({std::int64_t{1} << 30, std::int64_t{1} << 20}));
  ValueId b = g.add_input("b", f32({std::int64_t{1} << 20, std::int64_t{1} << 20}));
  ValueId y = g.add_value("y", f32({std::int64_t{1} << 30, std::int64_t{1} << 20}));
  g.add_node("MatMul", {a, b}, {y}, {}, "big");
  try {
    node_flops(g, g.node(0));
    FAIL() << "no error";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("node 'big'"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace collage
