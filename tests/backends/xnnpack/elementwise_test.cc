// Elementwise, broadcasting and activation ops on XNNPACK against the native
// reference, in both layouts: alone (plain order) and after a convolution
// (channels-last inside the runtime).
#include <gtest/gtest.h>

#include "backends/xnnpack/reference_check.h"

namespace collage::testing {
namespace {

// x -> op -> y, and x -> Conv(1x1) -> op -> y, so the op also runs channels-last.
void expect_unary_matches(const std::string& op, Attributes attributes = {},
                          std::vector<float> extra_scalars = {}, float low = -3.0f,
                          float high = 3.0f, std::int64_t opset = 13) {
  for (const Shape& shape : {Shape{2, 3, 5, 7}, Shape{3, 17}, Shape{4, 1, 6}}) {
    SCOPED_TRACE(::testing::Message() << op << " " << shape_to_string(shape));
    GraphMaker g(opset);
    ValueId in = g.input(shape);
    std::vector<ValueId> inputs = {in};
    for (float s : extra_scalars) inputs.push_back(g.scalar(s));
    expect_matches_reference(g.finish(g.node(op, inputs, shape, attributes)), 1, 1e-4, low, high);
  }
  SCOPED_TRACE(op + " after a convolution");
  GraphMaker g(opset);
  ValueId in = g.input({1, 4, 6, 5});
  ValueId conv = g.node("Conv", {in, g.weights({4, 4, 1, 1}), g.weights({4})}, {1, 4, 6, 5});
  std::vector<ValueId> inputs = {conv};
  for (float s : extra_scalars) inputs.push_back(g.scalar(s));
  expect_matches_reference(g.finish(g.node(op, inputs, {1, 4, 6, 5}, attributes)), 1, 1e-4, low,
                           high);
}

TEST(XnnpackElementwiseTest, ActivationsMatchReference) {
  expect_unary_matches("Relu");
  expect_unary_matches("Sigmoid");
  expect_unary_matches("HardSwish");
  expect_unary_matches("HardSigmoid", attrs({{"alpha", 0.3f}, {"beta", 0.4f}}));
  expect_unary_matches("LeakyRelu", attrs({{"alpha", 0.07f}}));
  expect_unary_matches("Elu", attrs({{"alpha", 0.8f}}));
}

TEST(XnnpackElementwiseTest, SwishMatchesReferenceWithAndWithoutAlpha) {
  expect_unary_matches("Swish", {}, {}, -6.0f, 6.0f);
  expect_unary_matches("Swish", attrs({{"alpha", 1.702f}}), {}, -6.0f, 6.0f);
}

TEST(XnnpackElementwiseTest, TanhGeluMatchesReference) {
  expect_unary_matches("Gelu", attrs({{"approximate", std::string("tanh")}}), {}, -6.0f, 6.0f, 20);
}

TEST(XnnpackElementwiseTest, ErfGeluIsNotSupported) {
  for (const Attributes& form : {Attributes{}, attrs({{"approximate", std::string("none")}})}) {
    GraphMaker g(20);
    Graph graph = g.finish(g.node("Gelu", {g.input({4})}, {4}, form));
    EXPECT_FALSE(xnnpack_backend().supports(graph, graph.node(0)));
  }
}

TEST(XnnpackElementwiseTest, GeluAndSwishOutsideTheOnnxDomainAreNotClaimed) {
  const std::vector<std::pair<std::string, Attributes>> nodes = {
      {"Gelu", attrs({{"approximate", std::string("tanh")}})}, {"Swish", {}}};
  for (const auto& [op, attributes] : nodes) {
    GraphMaker g(20);
    Graph graph = g.finish(g.node(op, {g.input({4})}, {4}, attributes));
    EXPECT_TRUE(xnnpack_backend().supports(graph, graph.node(0))) << op;
    graph.node(0).domain = "com.microsoft";
    EXPECT_FALSE(xnnpack_backend().supports(graph, graph.node(0))) << op;
  }
}

TEST(XnnpackElementwiseTest, ActivationsAfterAMatMulWithBiasMatchReference) {
  const std::vector<std::pair<std::string, Attributes>> cases = {
      {"Swish", {}},
      {"Swish", attrs({{"alpha", 1.702f}})},
      {"Gelu", attrs({{"approximate", std::string("tanh")}})},
      {"HardSwish", {}},
  };
  for (const auto& [op, attributes] : cases) {
    SCOPED_TRACE(op);
    GraphMaker g(20);
    ValueId product = g.node("MatMul", {g.input({6, 16}), g.weights({16, 8}, -2.0f, 2.0f)}, {6, 8});
    ValueId biased = g.node("Add", {product, g.weights({8})}, {6, 8});
    expect_matches_reference(g.finish(g.node(op, {biased}, {6, 8}, attributes)));
  }
}

TEST(XnnpackElementwiseTest, MathOpsMatchReference) {
  expect_unary_matches("Abs");
  expect_unary_matches("Neg");
  expect_unary_matches("Floor");
  expect_unary_matches("Ceil");
  expect_unary_matches("Round");
  expect_unary_matches("Identity");
  expect_unary_matches("Sqrt", {}, {}, 0.0f, 4.0f);
}

TEST(XnnpackElementwiseTest, PowByTwoAndOneHalfMatchReference) {
  expect_unary_matches("Pow", {}, {2.0f});
  expect_unary_matches("Pow", {}, {0.5f}, {}, 0.0f, 4.0f);
}

TEST(XnnpackElementwiseTest, PowByOtherExponentsIsNotSupported) {
  GraphMaker g;
  ValueId in = g.input({4});
  Graph graph = g.finish(g.node("Pow", {in, g.scalar(3.0f)}, {4}));
  EXPECT_FALSE(xnnpack_backend().supports(graph, graph.node(0)));
}

TEST(XnnpackElementwiseTest, ClipWithConstantBoundsMatchesReference) {
  expect_unary_matches("Clip", {}, {-0.5f, 1.5f});
  expect_unary_matches("Clip", attrs({{"min", -1.0f}, {"max", 0.25f}}), {}, -3.0f, 3.0f, 6);
}

TEST(XnnpackElementwiseTest, ClipWithComputedBoundsIsNotSupported) {
  GraphMaker g;
  ValueId in = g.input({4});
  ValueId low = g.input({});
  Graph graph = g.finish(g.node("Clip", {in, low}, {4}));
  EXPECT_FALSE(xnnpack_backend().supports(graph, graph.node(0)));
}

struct BroadcastCase {
  Shape a;
  Shape b;
  Shape out;
};

const std::vector<BroadcastCase>& broadcast_cases() {
  static const std::vector<BroadcastCase> cases = {
      {{2, 3, 4, 5}, {2, 3, 4, 5}, {2, 3, 4, 5}},
      {{2, 3, 4, 5}, {5}, {2, 3, 4, 5}},
      {{2, 3, 4, 5}, {3, 1, 1}, {2, 3, 4, 5}},
      {{2, 1, 4, 1}, {1, 3, 1, 5}, {2, 3, 4, 5}},
      {{4, 5}, {2, 3, 4, 5}, {2, 3, 4, 5}},
      {{3, 7}, {7}, {3, 7}},
      {{2, 3, 1}, {1, 5}, {2, 3, 5}},
      {{6}, {}, {6}},
  };
  return cases;
}

TEST(XnnpackElementwiseTest, BinaryOpsBroadcastLikeReference) {
  for (const char* op : {"Add", "Sub", "Mul", "Div"}) {
    for (const BroadcastCase& c : broadcast_cases()) {
      for (bool constant_b : {false, true}) {
        SCOPED_TRACE(::testing::Message() << op << " " << shape_to_string(c.a) << " "
                                          << shape_to_string(c.b) << (constant_b ? " const" : ""));
        GraphMaker g;
        ValueId a = g.input(c.a);
        ValueId b = constant_b ? g.weights(c.b, 0.5f, 2.0f) : g.input(c.b);
        // Inputs in [0.5, 2) keep Div away from zero.
        expect_matches_reference(g.finish(g.node(op, {a, b}, c.out)), 1, 1e-4, 0.5f, 2.0f);
      }
    }
  }
}

TEST(XnnpackElementwiseTest, BinaryOpsBroadcastInsideChannelsLastRegions) {
  for (const Shape& b_shape : {Shape{4, 1, 1}, Shape{1, 4, 6, 5}, Shape{1, 1, 1, 5}, Shape{5}}) {
    for (bool constant_b : {false, true}) {
      SCOPED_TRACE(::testing::Message()
                   << shape_to_string(b_shape) << (constant_b ? " const" : ""));
      GraphMaker g;
      ValueId in = g.input({2, 4, 6, 5});
      ValueId conv = g.node("Conv", {in, g.weights({4, 4, 3, 3}), g.weights({4})}, {2, 4, 6, 5},
                            attrs({{"pads", Ints{1, 1, 1, 1}}}));
      ValueId b = constant_b ? g.weights(b_shape) : g.input(b_shape);
      ValueId sum = g.node("Mul", {b, conv}, {2, 4, 6, 5});
      expect_matches_reference(g.finish(g.node("Relu", {sum}, {2, 4, 6, 5})));
    }
  }
}

TEST(XnnpackElementwiseTest, VariadicSumMaxMinMatchReference) {
  for (const char* op : {"Sum", "Max", "Min"}) {
    SCOPED_TRACE(op);
    GraphMaker g;
    ValueId a = g.input({2, 3, 4});
    ValueId b = g.input({3, 1});
    ValueId c = g.weights({4});
    expect_matches_reference(g.finish(g.node(op, {a, b, c}, {2, 3, 4})));
  }
}

TEST(XnnpackElementwiseTest, PReluWithPerChannelAndScalarSlopesMatchesReference) {
  for (const Shape& slope : {Shape{3, 1, 1}, Shape{1}, Shape{1, 3, 1, 1}}) {
    SCOPED_TRACE(shape_to_string(slope));
    GraphMaker g;
    ValueId in = g.input({2, 3, 4, 5});
    expect_matches_reference(g.finish(g.node("PRelu", {in, g.weights(slope)}, {2, 3, 4, 5})));
  }
  GraphMaker g;
  ValueId in = g.input({6, 7});
  expect_matches_reference(g.finish(g.node("PRelu", {in, g.weights({7})}, {6, 7})));
}

TEST(XnnpackElementwiseTest, PReluWithSpatialSlopeIsNotSupported) {
  GraphMaker g;
  ValueId in = g.input({2, 3, 4, 5});
  Graph graph = g.finish(g.node("PRelu", {in, g.weights({3, 4, 5})}, {2, 3, 4, 5}));
  EXPECT_FALSE(xnnpack_backend().supports(graph, graph.node(0)));
}

TEST(XnnpackElementwiseTest, BatchNormalizationMatchesReferenceInAnyRank) {
  for (const Shape& shape : {Shape{2, 3, 4, 5}, Shape{4, 6}, Shape{2, 5, 7}}) {
    SCOPED_TRACE(shape_to_string(shape));
    GraphMaker g;
    ValueId in = g.input(shape);
    const Shape c = {shape[1]};
    ValueId y = g.node("BatchNormalization",
                       {in, g.weights(c), g.weights(c), g.weights(c), g.weights(c, 0.5f, 2.0f)},
                       shape, attrs({{"epsilon", 1e-3f}}));
    expect_matches_reference(g.finish(y));
  }
}

}  // namespace
}  // namespace collage::testing
