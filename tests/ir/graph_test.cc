#include "collage/ir/graph.h"

#include <gtest/gtest.h>

#include "collage/ir/error.h"

namespace collage {
namespace {

TensorType f32(Shape shape) { return TensorType{DType::kFloat32, std::move(shape)}; }

// x -> Relu -> a -> Abs -> b (output); a -> Neg -> c (unused)
Graph small_graph() {
  Graph g;
  ValueId x = g.add_input("x", f32({2, 3}));
  ValueId a = g.add_value("a", f32({2, 3}));
  ValueId b = g.add_value("b", f32({2, 3}));
  ValueId c = g.add_value("c", f32({2, 3}));
  g.add_node("Relu", {x}, {a});
  g.add_node("Abs", {a}, {b});
  g.add_node("Neg", {a}, {c});
  g.add_output(b);
  return g;
}

TEST(GraphTest, PruneDropsNodesNoOutputNeeds) {
  Graph g = small_graph();
  g.prune();
  ASSERT_EQ(g.num_nodes(), 2u);
  EXPECT_EQ(g.node(1).op_type, "Abs");
  EXPECT_FALSE(g.find_value("c").has_value());
  EXPECT_EQ(g.value(g.outputs()[0]).name, "b");
  EXPECT_EQ(g.value(g.outputs()[0]).producer, 1);
}

TEST(GraphTest, SortTopologicallyOrdersProducersFirst) {
  Graph g;
  ValueId x = g.add_input("x", f32({1}));
  ValueId a = g.add_value("a", f32({1}));
  ValueId b = g.add_value("b", f32({1}));
  g.add_node("Abs", {a}, {b}, {}, "second");
  g.add_node("Relu", {x}, {a}, {}, "first");
  g.add_output(b);
  g.sort_topologically();
  EXPECT_EQ(g.node(0).name, "first");
  EXPECT_EQ(g.node(1).name, "second");
  EXPECT_EQ(g.value(b).producer, 1);
}

TEST(GraphTest, SortTopologicallyRejectsUndefinedValues) {
  Graph g;
  ValueId a = g.add_value("a", f32({1}));
  ValueId b = g.add_value("b", f32({1}));
  g.add_node("Abs", {a}, {b}, {}, "reader");
  EXPECT_THROW(g.sort_topologically(), Error);
}

TEST(GraphTest, ExtractSubgraphHasBoundaryInputsAndOutputs) {
  Graph g = small_graph();
  Graph sub = extract_subgraph(g, {1, 2});
  ASSERT_EQ(sub.inputs().size(), 1u);
  EXPECT_EQ(sub.value(sub.inputs()[0]).name, "a");
  // b is a graph output; c is read by nobody and not an output.
  ASSERT_EQ(sub.outputs().size(), 1u);
  EXPECT_EQ(sub.value(sub.outputs()[0]).name, "b");
  EXPECT_EQ(sub.num_nodes(), 2u);
}

// The partition's inputs that the model takes and outputs that the model
// gives are its model edges; values between partitions are not.
TEST(GraphTest, ExtractSubgraphNamesTheModelsOwnEdges) {
  Graph g = small_graph();
  EXPECT_EQ(extract_subgraph(g, {0}).model_edges, std::set<std::string>{"x"});
  EXPECT_EQ(extract_subgraph(g, {1, 2}).model_edges, std::set<std::string>{"b"});
  EXPECT_EQ(extract_subgraph(g, {0, 1}).model_edges, (std::set<std::string>{"x", "b"}));
  EXPECT_TRUE(extract_subgraph(g, {2}).model_edges.empty());
  EXPECT_TRUE(g.model_edges.empty());
}

TEST(GraphTest, ExtractSubgraphKeepsConstantsInside) {
  Graph g;
  ValueId x = g.add_input("x", f32({2}));
  ValueId w = g.add_constant("w", Tensor::from_vector<float>({1, 2}, {2}));
  ValueId y = g.add_value("y", f32({2}));
  g.add_node("Add", {x, w}, {y});
  g.add_output(y);
  Graph sub = extract_subgraph(g, {0});
  EXPECT_EQ(sub.inputs().size(), 1u);
  auto w_in_sub = sub.find_value("w");
  ASSERT_TRUE(w_in_sub.has_value());
  EXPECT_TRUE(sub.value(*w_in_sub).is_constant());
  EXPECT_EQ(sub.value(*w_in_sub).constant->data<float>()[1], 2.0f);
}

}  // namespace
}  // namespace collage
