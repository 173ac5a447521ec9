#include "collage/partition/dataflow_graph.h"

#include <gtest/gtest.h>

#include "collage/ir/error.h"
#include "partition/graph_builder.h"

namespace collage {
namespace {

using testing::GraphBuilder;
using testing::index_of;

// x -> conv(x, w) -> relu -> add(relu, x) (output); an unused softmax of x.
Graph residual_graph() {
  GraphBuilder b;
  ValueId x = b.input("x");
  ValueId w = b.constant("w");
  ValueId conv = b.op("Conv", {x, w}, "conv");
  ValueId relu = b.op("Relu", {conv}, "relu");
  ValueId add = b.op("Add", {relu, x}, "add");
  b.op("Softmax", {x}, "softmax");
  b.output(add);
  return std::move(b.graph());
}

TEST(DataflowGraphTest, IndicesAreTopological) {
  Graph graph = residual_graph();
  DataflowGraph dfg(graph);
  ASSERT_EQ(dfg.size(), 6u);
  for (PostDfsIndex index = 0; index < dfg.size(); ++index) {
    for (PostDfsIndex input : dfg.inputs(index)) EXPECT_LT(input, index);
  }
}

TEST(DataflowGraphTest, OrderIsPostDfsFromTheOutputs) {
  Graph graph = residual_graph();
  DataflowGraph dfg(graph);
  // Producers are numbered just before their first consumer.
  EXPECT_EQ(dfg.describe(0), "#0 input 'x'");
  EXPECT_EQ(dfg.describe(1), "#1 constant 'w'");
  EXPECT_EQ(index_of(dfg, "conv"), 2u);
  EXPECT_EQ(index_of(dfg, "relu"), 3u);
  EXPECT_EQ(index_of(dfg, "add"), 4u);
  // Nodes no output needs come last.
  EXPECT_EQ(index_of(dfg, "softmax"), 5u);
}

TEST(DataflowGraphTest, InputsAndConstantsAreHostIndices) {
  Graph graph = residual_graph();
  DataflowGraph dfg(graph);
  EXPECT_EQ(dfg.role(0), DataflowGraph::Role::kInput);
  EXPECT_EQ(dfg.role(1), DataflowGraph::Role::kConstant);
  EXPECT_TRUE(dfg.is_operator(2));
  EXPECT_EQ(dfg.host_set(), IndexSet(6, {0, 1}));
}

TEST(DataflowGraphTest, UsersAndInputsFollowTheEdges) {
  Graph graph = residual_graph();
  DataflowGraph dfg(graph);
  PostDfsIndex add = index_of(dfg, "add");
  EXPECT_EQ(dfg.inputs(add), (std::vector<PostDfsIndex>{index_of(dfg, "relu"), 0}));
  EXPECT_EQ(dfg.users(0),
            (std::vector<PostDfsIndex>{index_of(dfg, "conv"), add, index_of(dfg, "softmax")}));
  EXPECT_TRUE(dfg.is_graph_output(add));
  EXPECT_FALSE(dfg.is_graph_output(index_of(dfg, "relu")));
}

TEST(DataflowGraphTest, AValueReadTwiceMakesOneEdge) {
  GraphBuilder b;
  ValueId x = b.input("x");
  b.output(b.op("Add", {x, x}, "add"));
  DataflowGraph dfg(b.graph());
  EXPECT_EQ(dfg.inputs(1), std::vector<PostDfsIndex>{0});
  EXPECT_EQ(dfg.users(0), std::vector<PostDfsIndex>{1});
}

TEST(DataflowGraphTest, DownstreamOfIsTheTransitiveClosureOfUsers) {
  Graph graph = residual_graph();
  DataflowGraph dfg(graph);
  EXPECT_EQ(dfg.downstream_of(index_of(dfg, "conv")),
            IndexSet(6, {index_of(dfg, "relu"), index_of(dfg, "add")}));
  EXPECT_EQ(dfg.downstream_of(0), IndexSet(6, {2, 3, 4, 5}));
  EXPECT_TRUE(dfg.downstream_of(index_of(dfg, "add")).empty());
}

TEST(DataflowGraphTest, KindsComeFromTheOpTable) {
  Graph graph = residual_graph();
  graph.node(*graph.find_node("relu")).domain = "com.example";
  DataflowGraph dfg(graph);
  EXPECT_EQ(dfg.kind(index_of(dfg, "conv")), OpKind::kOutElementwiseFusable);
  EXPECT_EQ(dfg.kind(index_of(dfg, "add")), OpKind::kBroadcast);
  EXPECT_EQ(dfg.kind(index_of(dfg, "softmax")), OpKind::kOpaque);
  // An op of another domain may share a name, not semantics.
  EXPECT_EQ(dfg.kind(index_of(dfg, "relu")), OpKind::kOpaque);
}

TEST(DataflowGraphTest, MapsIndicesBackToNodesAndValues) {
  Graph graph = residual_graph();
  DataflowGraph dfg(graph);
  PostDfsIndex relu = index_of(dfg, "relu");
  EXPECT_EQ(dfg.node(relu).op_type, "Relu");
  EXPECT_EQ(dfg.index_of_value(*graph.find_value("relu")), relu);
  EXPECT_EQ(graph.value(dfg.value_id(1)).name, "w");
  EXPECT_EQ(dfg.node_ids(IndexSet(6, {0, 3, 2})),
            (std::vector<NodeId>{*graph.find_node("conv"), *graph.find_node("relu")}));
}

TEST(DataflowGraphTest, RejectsAValueNothingDefines) {
  Graph graph;
  ValueId dangling = graph.add_value("dangling", TensorType{DType::kFloat32, {1}});
  ValueId y = graph.add_value("y", TensorType{DType::kFloat32, {1}});
  graph.add_node("Relu", {dangling}, {y}, {}, "relu");
  graph.add_output(y);
  EXPECT_THROW(DataflowGraph{graph}, Error);
}

}  // namespace
}  // namespace collage
