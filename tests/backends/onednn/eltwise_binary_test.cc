#include <gtest/gtest.h>

#include <cmath>

#include "backends/onednn/onednn_test_util.h"

namespace collage::onednn_test {
namespace {

struct UnaryCase {
  std::string name;
  std::string op;
  Attributes attributes = {};
  // Input range: Log and Sqrt need positive inputs.
  float low = -3.f;
  float high = 3.f;
};

class ActivationTest : public ::testing::TestWithParam<UnaryCase> {};

TEST_P(ActivationTest, MatchesTheReference) {
  const UnaryCase& c = GetParam();
  GraphBuilder b;
  b.output(b.node(c.op, {b.input({2, 3, 5, 7})}, {2, 3, 5, 7}, c.attributes));
  EXPECT_TRUE(onednn_backend().supports(b.graph(), b.graph().node(0)));
  EXPECT_TRUE(matches_reference(b.graph(), 1, c.low, c.high));
}

INSTANTIATE_TEST_SUITE_P(
    Ops, ActivationTest,
    ::testing::Values(
        UnaryCase{"Relu", "Relu"}, UnaryCase{"LeakyRelu", "LeakyRelu"},
        UnaryCase{"LeakyReluAlpha", "LeakyRelu", attrs({{"alpha", 0.3f}})},
        UnaryCase{"Sigmoid", "Sigmoid"}, UnaryCase{"Tanh", "Tanh"},
        UnaryCase{"HardSwish", "HardSwish", {}, -5.f, 5.f},
        UnaryCase{"HardSigmoid", "HardSigmoid", {}, -5.f, 5.f},
        UnaryCase{"HardSigmoidCustom", "HardSigmoid", attrs({{"alpha", 0.5f}, {"beta", 0.25f}}),
                  -5.f, 5.f},
        UnaryCase{"Elu", "Elu"}, UnaryCase{"EluAlpha", "Elu", attrs({{"alpha", 0.5f}})},
        UnaryCase{"Exp", "Exp"}, UnaryCase{"Log", "Log", {}, 0.01f, 4.f},
        UnaryCase{"Sqrt", "Sqrt", {}, 0.f, 4.f}, UnaryCase{"Abs", "Abs"}, UnaryCase{"Neg", "Neg"},
        UnaryCase{"Softplus", "Softplus"}, UnaryCase{"Reciprocal", "Reciprocal", {}, 0.5f, 3.f},
        UnaryCase{"Gelu", "Gelu", {}, -6.f, 6.f},
        UnaryCase{"GeluErf", "Gelu", attrs({{"approximate", std::string("none")}}), -6.f, 6.f},
        UnaryCase{"GeluTanh", "Gelu", attrs({{"approximate", std::string("tanh")}}), -6.f, 6.f},
        UnaryCase{"Swish", "Swish", {}, -8.f, 8.f},
        UnaryCase{"SwishAlpha", "Swish", attrs({{"alpha", 1.702f}}), -8.f, 8.f}),
    [](const ::testing::TestParamInfo<UnaryCase>& info) { return info.param.name; });

TEST(ClipTest, ConstantBoundInputsMatchTheReference) {
  GraphBuilder b;
  b.output(b.node("Clip", {b.input({4, 9}), b.constant(scalar(-0.5f)), b.constant(scalar(0.25f))},
                  {4, 9}));
  EXPECT_TRUE(onednn_backend().supports(b.graph(), b.graph().node(0)));
  EXPECT_TRUE(matches_reference(b.graph()));
}

TEST(ClipTest, OnlyAnUpperBoundMatchesTheReference) {
  GraphBuilder b;
  b.output(b.node("Clip", {b.input({4, 9}), kNoValue, b.constant(scalar(0.25f))}, {4, 9}));
  EXPECT_TRUE(matches_reference(b.graph()));
}

TEST(ClipTest, OpsetSixAttributesMatchTheReference) {
  GraphBuilder b(6);
  b.output(b.node("Clip", {b.input({4, 9})}, {4, 9}, attrs({{"min", 0.f}, {"max", 6.f}})));
  EXPECT_TRUE(matches_reference(b.graph(), 1, -10.f, 10.f));
}

TEST(ClipTest, RuntimeBoundsAreRejected) {
  GraphBuilder b;
  b.output(b.node("Clip", {b.input({4, 9}), b.input({})}, {4, 9}));
  EXPECT_FALSE(onednn_backend().supports(b.graph(), b.graph().node(0)));
  EXPECT_NE(compile_failure(b.graph()), "");
}

TEST(PowTest, SquareOfNegativeNumbersMatchesTheReference) {
  GraphBuilder b;
  b.output(b.node("Pow", {b.input({3, 8}), b.constant(scalar(2.f))}, {3, 8}));
  EXPECT_TRUE(onednn_backend().supports(b.graph(), b.graph().node(0)));
  EXPECT_TRUE(matches_reference(b.graph(), 1, -3.f, 3.f));
}

TEST(PowTest, GeneralExponentsAreRejected) {
  GraphBuilder b;
  b.output(b.node("Pow", {b.input({3, 8}), b.constant(scalar(1.7f))}, {3, 8}));
  EXPECT_FALSE(onednn_backend().supports(b.graph(), b.graph().node(0)));
}

TEST(GeluTest, OpsetTwentyGeluMatchesTheErfFormula) {
  GraphBuilder b(20);
  b.output(b.node("Gelu", {b.input({5, 6})}, {5, 6}));
  const std::vector<Tensor> inputs = random_inputs(b.graph(), 3, -4.f, 4.f);
  const std::vector<Tensor> outputs = run_onednn(b.graph(), inputs);
  ASSERT_EQ(outputs.size(), 1u);
  Tensor expected = Tensor::allocate(f32({5, 6}));
  for (int i = 0; i < 30; ++i) {
    const float x = inputs[0].data<float>()[i];
    expected.data<float>()[i] = 0.5f * x * (1.f + std::erf(x / std::sqrt(2.f)));
  }
  EXPECT_TRUE(all_close(outputs[0], expected));
}

TEST(GeluTest, AnUnknownApproximationIsRejected) {
  GraphBuilder b(20);
  b.output(
      b.node("Gelu", {b.input({5, 6})}, {5, 6}, attrs({{"approximate", std::string("sigmoid")}})));
  EXPECT_FALSE(onednn_backend().supports(b.graph(), b.graph().node(0)));
}

TEST(SwishTest, AlphaScalesTheSigmoidArgument) {
  GraphBuilder b;
  b.output(b.node("Swish", {b.input({4, 7})}, {4, 7}, attrs({{"alpha", 1.702f}})));
  const std::vector<Tensor> inputs = random_inputs(b.graph(), 5, -6.f, 6.f);
  const std::vector<Tensor> outputs = run_onednn(b.graph(), inputs);
  ASSERT_EQ(outputs.size(), 1u);
  Tensor expected = Tensor::allocate(f32({4, 7}));
  for (int i = 0; i < 28; ++i) {
    const double x = inputs[0].data<float>()[i];
    expected.data<float>()[i] = static_cast<float>(x / (1.0 + std::exp(-1.702 * x)));
  }
  EXPECT_TRUE(all_close(outputs[0], expected));
}

TEST(ActivationDomainTest, GeluAndSwishOutsideTheOnnxDomainAreNotClaimed) {
  for (const char* op : {"Gelu", "Swish"}) {
    GraphBuilder b;
    b.output(b.node(op, {b.input({2, 3})}, {2, 3}));
    EXPECT_TRUE(onednn_backend().supports(b.graph(), b.graph().node(0))) << op;
    b.graph().node(0).domain = "com.microsoft";
    EXPECT_FALSE(onednn_backend().supports(b.graph(), b.graph().node(0))) << op;
  }
}

struct BinaryCase {
  std::string name;
  std::string op;
  Shape a;
  Shape b;
  Shape out;
};

class BinaryTest : public ::testing::TestWithParam<BinaryCase> {};

TEST_P(BinaryTest, MatchesTheReference) {
  const BinaryCase& c = GetParam();
  GraphBuilder b;
  b.output(b.node(c.op, {b.input(c.a), b.input(c.b)}, c.out));
  EXPECT_TRUE(onednn_backend().supports(b.graph(), b.graph().node(0)));
  // Division by values near zero would make the comparison meaningless.
  const bool div = c.op == "Div";
  EXPECT_TRUE(matches_reference(b.graph(), 1, div ? 0.5f : -1.f, div ? 2.f : 1.f));
}

INSTANTIATE_TEST_SUITE_P(
    Grid, BinaryTest,
    ::testing::Values(
        BinaryCase{"AddSameShape", "Add", {2, 3, 4, 5}, {2, 3, 4, 5}, {2, 3, 4, 5}},
        BinaryCase{"SubPerChannel", "Sub", {2, 3, 4, 5}, {3, 1, 1}, {2, 3, 4, 5}},
        BinaryCase{"MulRow", "Mul", {6, 7}, {7}, {6, 7}},
        BinaryCase{"DivScalar", "Div", {6, 7}, {}, {6, 7}},
        BinaryCase{"MaxColumn", "Max", {6, 7}, {6, 1}, {6, 7}},
        BinaryCase{"MinMiddleAxis", "Min", {2, 5, 3}, {1, 5, 1}, {2, 5, 3}},
        BinaryCase{"AddBroadcastFirstInput", "Add", {5}, {4, 5}, {4, 5}},
        BinaryCase{"MulBroadcastFirstInput", "Mul", {1, 3, 1, 1}, {2, 3, 4, 4}, {2, 3, 4, 4}},
        BinaryCase{"AddScalars", "Add", {}, {}, {}},
        BinaryCase{"AddHighRank", "Add", {2, 1, 2, 3, 2, 2}, {2, 2}, {2, 1, 2, 3, 2, 2}}),
    [](const ::testing::TestParamInfo<BinaryCase>& info) { return info.param.name; });

TEST(BinarySupportTest, RejectsSubBroadcastingItsFirstInput) {
  GraphBuilder b;
  b.output(b.node("Sub", {b.input({5}), b.input({4, 5})}, {4, 5}));
  EXPECT_FALSE(onednn_backend().supports(b.graph(), b.graph().node(0)));
  EXPECT_NE(compile_failure(b.graph()).find("broadcasts its first input"), std::string::npos);
}

TEST(BinarySupportTest, RejectsBroadcastingBothInputs) {
  GraphBuilder b;
  b.output(b.node("Add", {b.input({4, 1}), b.input({1, 5})}, {4, 5}));
  EXPECT_FALSE(onednn_backend().supports(b.graph(), b.graph().node(0)));
}

TEST(BinarySupportTest, RejectsIntegerAdds) {
  GraphBuilder b;
  Graph& g = b.graph();
  ValueId x = g.add_input("i", TensorType{DType::kInt64, {3}});
  ValueId y = g.add_value("o", TensorType{DType::kInt64, {3}});
  g.add_node("Add", {x, x}, {y});
  g.add_output(y);
  EXPECT_FALSE(onednn_backend().supports(g, g.node(0)));
  EXPECT_NE(compile_failure(g), "");
}

}  // namespace
}  // namespace collage::onednn_test
