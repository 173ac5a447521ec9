#include "collage/partition/sub_graph.h"

#include <gtest/gtest.h>

#include "partition/graph_builder.h"

namespace collage {
namespace {

using testing::GraphBuilder;
using testing::index_of;
using testing::set_of;

// x(0) -> a Relu(1) -> b Abs(2) -> c Neg(3) -> d Exp(4) -> e Add(c, d)(5) (output)
Graph chain_with_skip() {
  GraphBuilder b;
  ValueId x = b.input("x");
  ValueId a = b.op("Relu", {x}, "a");
  ValueId bb = b.op("Abs", {a}, "b");
  ValueId c = b.op("Neg", {bb}, "c");
  ValueId d = b.op("Exp", {c}, "d");
  b.output(b.op("Add", {c, d}, "e"));
  return std::move(b.graph());
}

TEST(SubGraphTest, DerivesEntryExitInputAndOutput) {
  Graph graph = chain_with_skip();
  DataflowGraph dfg(graph);
  SubGraph sub_graph(dfg, IndexSet(6, {2, 3}));
  EXPECT_EQ(sub_graph.entry(), IndexSet(6, {2}));
  EXPECT_EQ(sub_graph.exit(), IndexSet(6, {3}));
  EXPECT_EQ(sub_graph.input(), IndexSet(6, {1}));
  EXPECT_EQ(sub_graph.output(), IndexSet(6, {4, 5}));
  EXPECT_EQ(sub_graph.label(), "Abs+Neg");
}

TEST(SubGraphTest, AGraphOutputInsideIsAnExit) {
  Graph graph = chain_with_skip();
  DataflowGraph dfg(graph);
  SubGraph sub_graph(dfg, IndexSet(6, {4, 5}));
  EXPECT_EQ(sub_graph.exit(), IndexSet(6, {5}));
  EXPECT_TRUE(sub_graph.output().empty());
}

TEST(SubGraphTest, DepthCountsOperatorsOnTheLongestInsidePath) {
  Graph graph = chain_with_skip();
  DataflowGraph dfg(graph);
  EXPECT_EQ(SubGraph(dfg, IndexSet(6, {3, 4, 5})).depth(), 3u);
  EXPECT_EQ(SubGraph(dfg, IndexSet(6, {1, 3})).depth(), 1u);
  // The input is a host node: it adds no depth.
  EXPECT_EQ(SubGraph(dfg, IndexSet(6, {0, 1})).depth(), 1u);
}

TEST(SubGraphTest, KindIsTheLargestKindInside) {
  Graph graph = chain_with_skip();
  DataflowGraph dfg(graph);
  EXPECT_EQ(SubGraph(dfg, IndexSet(6, {3, 4})).kind(), OpKind::kElementwise);
  EXPECT_EQ(SubGraph(dfg, IndexSet(6, {3, 4, 5})).kind(), OpKind::kBroadcast);
}

TEST(SubGraphTest, NonConvexSetIsRejectedAndFillingTheGapMakesItValid) {
  Graph graph = chain_with_skip();
  DataflowGraph dfg(graph);
  SubGraph gap(dfg, IndexSet(6, {3, 5}));
  EXPECT_FALSE(gap.is_convex(dfg));
  EXPECT_FALSE(gap.is_valid(dfg, {}));
  SubGraph filled(dfg, IndexSet(6, {3, 4, 5}));
  EXPECT_TRUE(filled.is_convex(dfg));
  EXPECT_TRUE(filled.is_valid(dfg, {}));
}

TEST(SubGraphTest, MultipleExitsAreRejectedAboveMaxExits) {
  // x -> a -> b (output), a -> c (output): {a, b, c} has exits b and c.
  GraphBuilder b;
  ValueId x = b.input("x");
  ValueId a = b.op("Relu", {x}, "a");
  b.output(b.op("Abs", {a}, "b"));
  b.output(b.op("Neg", {a}, "c"));
  DataflowGraph dfg(b.graph());
  SubGraph sub_graph(dfg, set_of(dfg, {"a", "b", "c"}));
  EXPECT_EQ(sub_graph.exit().popcount(), 2u);
  EXPECT_FALSE(sub_graph.is_valid(dfg, {.max_exits = 1}));
  EXPECT_TRUE(sub_graph.is_valid(dfg, {.max_exits = 2}));
}

TEST(SubGraphTest, TapsAreRejectedUnlessAllowed) {
  // c feeds d inside and e outside: with {c, d}, c is a tap.
  Graph graph = chain_with_skip();
  DataflowGraph dfg(graph);
  SubGraph tapped(dfg, IndexSet(6, {3, 4}));
  EXPECT_TRUE(tapped.has_taps(dfg));
  EXPECT_FALSE(tapped.is_valid(dfg, {.allow_taps = false}));
  EXPECT_TRUE(tapped.is_valid(dfg, {.allow_taps = true}));
  EXPECT_FALSE(SubGraph(dfg, IndexSet(6, {3, 4, 5})).has_taps(dfg));
}

TEST(SubGraphTest, DepthAboveMaxDepthIsRejected) {
  Graph graph = chain_with_skip();
  DataflowGraph dfg(graph);
  SubGraph sub_graph(dfg, IndexSet(6, {1, 2, 3}));
  EXPECT_FALSE(sub_graph.is_valid(dfg, {.max_depth = 2}));
  EXPECT_TRUE(sub_graph.is_valid(dfg, {.max_depth = 3}));
  EXPECT_EQ(*sub_graph.invalid_reason(dfg, {.max_depth = 2}), "its depth is 3 (at most 2)");
}

TEST(SubGraphTest, EmptySetIsNeverValid) {
  Graph graph = chain_with_skip();
  DataflowGraph dfg(graph);
  EXPECT_FALSE(SubGraph(dfg, IndexSet(6)).is_valid(dfg, {}));
}

TEST(SubGraphTest, ExtractTakesBoundaryValuesAsInputsAndOutputs) {
  Graph graph = chain_with_skip();
  DataflowGraph dfg(graph);
  Graph extracted = SubGraph(dfg, IndexSet(6, {2, 3})).extract(dfg);
  ASSERT_EQ(extracted.num_nodes(), 2u);
  ASSERT_EQ(extracted.inputs().size(), 1u);
  EXPECT_EQ(extracted.value(extracted.inputs()[0]).name, "a");
  ASSERT_EQ(extracted.outputs().size(), 1u);
  EXPECT_EQ(extracted.value(extracted.outputs()[0]).name, "c");
}

TEST(SubGraphTest, ExtractKeepsGraphOutputsAndConstants) {
  GraphBuilder b;
  ValueId x = b.input("x");
  ValueId w = b.constant("w");
  ValueId m = b.op("Mul", {x, w}, "m");
  ValueId r = b.op("Relu", {m}, "r");
  b.output(m);
  b.output(r);
  DataflowGraph dfg(b.graph());
  Graph extracted = SubGraph(dfg, set_of(dfg, {"m", "r"})).extract(dfg);
  ASSERT_EQ(extracted.inputs().size(), 1u);
  EXPECT_EQ(extracted.value(extracted.inputs()[0]).name, "x");
  EXPECT_TRUE(extracted.value(*extracted.find_value("w")).is_constant());
  ASSERT_EQ(extracted.outputs().size(), 2u);
  EXPECT_EQ(extracted.value(extracted.outputs()[0]).name, "m");
  EXPECT_EQ(extracted.value(extracted.outputs()[1]).name, "r");
}

TEST(SubGraphTest, DisjointUnionJoinsInsidesAndLabels) {
  Graph graph = chain_with_skip();
  DataflowGraph dfg(graph);
  SubGraph up(dfg, IndexSet(6, {1}), "first");
  SubGraph down(dfg, IndexSet(6, {2}), "second");
  EXPECT_TRUE(up.feeds(down));
  EXPECT_FALSE(down.feeds(up));
  EXPECT_TRUE(down.touches(up));
  SubGraph both = up.disjoint_union(dfg, down);
  EXPECT_EQ(both.inside(), IndexSet(6, {1, 2}));
  EXPECT_EQ(both.label(), "first+second");
  EXPECT_EQ(both.to_string(), "first+second{1,2}");
}

}  // namespace
}  // namespace collage
