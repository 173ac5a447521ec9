#include "collage/ir/pattern.h"

#include <gtest/gtest.h>

namespace collage {
namespace {

TensorType f32(Shape shape) { return TensorType{DType::kFloat32, std::move(shape)}; }

// x, w (constant), b (constant) -> Conv(x, w, b) = c -> Add(c, x) = s -> Relu(s) = r (output)
struct ConvGraph {
  Graph graph;
  NodeId conv, add, relu;

  ConvGraph() {
    ValueId x = graph.add_input("x", f32({1, 4, 8, 8}));
    ValueId w = graph.add_constant("w", Tensor::zeros(f32({4, 4, 3, 3})));
    ValueId b = graph.add_constant("b", Tensor::zeros(f32({4})));
    ValueId c = graph.add_value("c", f32({1, 4, 8, 8}));
    ValueId s = graph.add_value("s", f32({1, 4, 8, 8}));
    ValueId r = graph.add_value("r", f32({1, 4, 8, 8}));
    Attributes attributes;
    attributes.set("kernel_shape", std::vector<std::int64_t>{3, 3});
    conv = graph.add_node("Conv", {x, w, b}, {c}, attributes, "conv");
    add = graph.add_node("Add", {c, x}, {s}, {}, "add");
    relu = graph.add_node("Relu", {s}, {r}, {}, "relu");
    graph.add_output(r);
  }
};

TEST(PatternTest, OpPatternMatchesANodeOfItsType) {
  ConvGraph g;
  auto matched = match(Pattern::op("Relu"), g.graph, g.relu);
  ASSERT_TRUE(matched.has_value());
  EXPECT_EQ(*matched, std::vector<NodeId>{g.relu});
}

TEST(PatternTest, OpPatternRejectsANodeOfAnotherType) {
  ConvGraph g;
  EXPECT_FALSE(match(Pattern::op("Relu"), g.graph, g.add).has_value());
}

TEST(PatternTest, InputPatternsPullProducersIntoTheMatch) {
  ConvGraph g;
  Pattern conv = Pattern::op("Conv", {Pattern::wildcard(), Pattern::constant()});
  Pattern pattern = Pattern::op("Relu", {Pattern::op("Add", {conv, Pattern::wildcard()})});
  auto matched = match(pattern, g.graph, g.relu);
  ASSERT_TRUE(matched.has_value());
  EXPECT_EQ(*matched, (std::vector<NodeId>{g.conv, g.add, g.relu}));
}

TEST(PatternTest, WildcardMatchesAValueWithoutTakingItsProducer) {
  ConvGraph g;
  auto matched = match(Pattern::op("Add", {Pattern::wildcard()}), g.graph, g.add);
  ASSERT_TRUE(matched.has_value());
  EXPECT_EQ(*matched, std::vector<NodeId>{g.add});
}

TEST(PatternTest, ConstantMatchesOnlyInitializers) {
  ConvGraph g;
  EXPECT_TRUE(
      match(Pattern::op("Conv", {Pattern::wildcard(), Pattern::constant()}), g.graph, g.conv));
  EXPECT_FALSE(match(Pattern::op("Conv", {Pattern::constant()}), g.graph, g.conv));
}

TEST(PatternTest, InputPatternsAreMatchedInOrder) {
  ConvGraph g;
  // Add's inputs are (conv output, x): the conv is the first input, not the second.
  Pattern conv_second = Pattern::op("Add", {Pattern::wildcard(), Pattern::op("Conv")});
  EXPECT_FALSE(match(conv_second, g.graph, g.add).has_value());
}

TEST(PatternTest, CommutativeOpMatchesSwappedInputs) {
  ConvGraph g;
  Pattern add = Pattern::commutative_op("Add", Pattern::wildcard(), Pattern::op("Conv"));
  auto matched = match(add, g.graph, g.add);
  ASSERT_TRUE(matched.has_value());
  EXPECT_EQ(*matched, (std::vector<NodeId>{g.conv, g.add}));
}

TEST(PatternTest, AlternativesTakeTheFirstThatMatches) {
  ConvGraph g;
  Pattern either = Pattern::op("Abs") | Pattern::op("Relu", {Pattern::op("Add")});
  auto matched = match(either, g.graph, g.relu);
  ASSERT_TRUE(matched.has_value());
  EXPECT_EQ(*matched, (std::vector<NodeId>{g.add, g.relu}));
}

TEST(PatternTest, OptionalMatchesWithAndWithoutTheWrapper) {
  ConvGraph g;
  Pattern add = Pattern::op("Add", {Pattern::op("Conv")});
  Pattern maybe_relu = add.optional([](Pattern p) { return Pattern::op("Relu", {p}); });
  auto with_relu = match(maybe_relu, g.graph, g.relu);
  ASSERT_TRUE(with_relu.has_value());
  EXPECT_EQ(*with_relu, (std::vector<NodeId>{g.conv, g.add, g.relu}));
  auto without_relu = match(maybe_relu, g.graph, g.add);
  ASSERT_TRUE(without_relu.has_value());
  EXPECT_EQ(*without_relu, (std::vector<NodeId>{g.conv, g.add}));
}

TEST(PatternTest, WherePredicateFiltersOnAttributes) {
  ConvGraph g;
  auto kernel_is = [](std::int64_t size) {
    return [size](const Graph&, const Node& node) {
      return node.attributes.get_ints("kernel_shape", {}) == std::vector<std::int64_t>{size, size};
    };
  };
  EXPECT_TRUE(match(Pattern::op("Conv").where(kernel_is(3)), g.graph, g.conv).has_value());
  EXPECT_FALSE(match(Pattern::op("Conv").where(kernel_is(1)), g.graph, g.conv).has_value());
}

TEST(PatternTest, WhereOnAlternativesAppliesToEachAlternative) {
  ConvGraph g;
  auto never = [](const Graph&, const Node&) { return false; };
  Pattern either = (Pattern::op("Relu") | Pattern::op("Add")).where(never);
  EXPECT_FALSE(match(either, g.graph, g.relu).has_value());
}

TEST(PatternTest, OpsOfOtherDomainsDoNotMatch) {
  ConvGraph g;
  g.graph.node(g.relu).domain = "com.microsoft";
  EXPECT_FALSE(match(Pattern::op("Relu"), g.graph, g.relu).has_value());
}

TEST(PatternTest, MissingInputsFailTheMatch) {
  ConvGraph g;
  Pattern too_many = Pattern::op("Relu", {Pattern::wildcard(), Pattern::wildcard()});
  EXPECT_FALSE(match(too_many, g.graph, g.relu).has_value());
}

TEST(PatternTest, ANodeReachedTwiceIsReportedOnce) {
  Graph graph;
  ValueId x = graph.add_input("x", f32({4}));
  ValueId r = graph.add_value("r", f32({4}));
  ValueId s = graph.add_value("s", f32({4}));
  NodeId relu = graph.add_node("Relu", {x}, {r});
  NodeId add = graph.add_node("Add", {r, r}, {s});
  graph.add_output(s);
  Pattern pattern = Pattern::op("Add", {Pattern::op("Relu"), Pattern::op("Relu")});
  auto matched = match(pattern, graph, add);
  ASSERT_TRUE(matched.has_value());
  EXPECT_EQ(*matched, (std::vector<NodeId>{relu, add}));
}

}  // namespace
}  // namespace collage
