// collapse_reshapes: a chain of Reshape, Flatten, Squeeze and Unsqueeze is one
// Reshape to the last shape, and one that keeps its input's shape goes.
#include "collage/ir/passes/collapse_reshapes.h"

#include <gtest/gtest.h>

#include "collage/ir/passes/partial_type.h"
#include "ir/passes/passes_test_util.h"

namespace collage {
namespace {

using testing::f32;
using testing::i64_constant;
using testing::ints;
using testing::node_writing;

TEST(CollapseReshapesTest, AChainBecomesOneReshapeOfItsFirstInputToAConstantShape) {
  Graph g;
  ValueId x = g.add_input("x", f32({2, 3, 4}));
  ValueId flat = g.add_value("flat", f32({2, 12}));
  ValueId up = g.add_value("up", f32({1, 2, 12}));
  ValueId y = g.add_value("y", f32({1, 2, 12}));
  g.add_node("Flatten", {x}, {flat});
  g.add_node("Unsqueeze", {flat, i64_constant(g, "axes", {0})}, {up});
  g.add_node("Relu", {up}, {y});
  g.add_output(y);
  EXPECT_EQ(collapse_reshapes(g), 1);
  ASSERT_EQ(g.num_nodes(), 2u);
  const Node& reshape = node_writing(g, "up");
  EXPECT_EQ(reshape.op_type, "Reshape");
  EXPECT_TRUE(reshape.attributes.empty());
  ASSERT_EQ(reshape.inputs.size(), 2u);
  EXPECT_EQ(g.value(reshape.inputs[0]).name, "x");
  const Value& shape = g.value(reshape.inputs[1]);
  ASSERT_TRUE(shape.is_constant());
  EXPECT_EQ(ints(*shape.constant), (std::vector<std::int64_t>{1, 2, 12}));
}

TEST(CollapseReshapesTest, AReshapeToItsInputsShapeIsRemoved) {
  Graph g;
  ValueId x = g.add_input("x", f32({2, 3}));
  ValueId r = g.add_value("r", f32({2, 3}));
  ValueId y = g.add_value("y", f32({2, 3}));
  g.add_node("Reshape", {x, i64_constant(g, "shape", {2, -1})}, {r});
  g.add_node("Relu", {r}, {y});
  g.add_output(y);
  EXPECT_EQ(collapse_reshapes(g), 1);
  ASSERT_EQ(g.num_nodes(), 1u);
  EXPECT_EQ(g.value(node_writing(g, "y").inputs[0]).name, "x");
}

TEST(CollapseReshapesTest, AReshapeWhoseOutputShapeIsNotKnownStays) {
  Graph g;
  ValueId x = g.add_input("x", f32({2, 3}));
  ValueId s = g.add_input("s", TensorType{DType::kInt64, {2}});
  ValueId flat = g.add_value("flat", f32({6}));
  ValueId y = g.add_value("y", f32({kUnknownDim, kUnknownDim}));
  g.add_node("Reshape", {x, i64_constant(g, "flat_shape", {6})}, {flat});
  g.add_node("Reshape", {flat, s}, {y});
  g.add_output(y);
  EXPECT_EQ(collapse_reshapes(g), 0);
  EXPECT_EQ(node_writing(g, "y").inputs[0], flat);
}

}  // namespace
}  // namespace collage
