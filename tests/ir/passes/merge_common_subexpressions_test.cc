// merge_common_subexpressions: nodes with the same op, attributes and inputs
// are computed once; equal constants are merged first.
#include "collage/ir/passes/merge_common_subexpressions.h"

#include <gtest/gtest.h>

#include "ir/passes/passes_test_util.h"

namespace collage {
namespace {

using testing::f32;
using testing::f32_constant;
using testing::node_writing;

TEST(MergeCommonSubexpressionsTest, AChainOfDuplicatesMergesWhole) {
  Graph g;
  ValueId x = g.add_input("x", f32({2}));
  ValueId a1 = g.add_value("a1", f32({2}));
  ValueId b1 = g.add_value("b1", f32({2}));
  ValueId a2 = g.add_value("a2", f32({2}));
  ValueId b2 = g.add_value("b2", f32({2}));
  ValueId y = g.add_value("y", f32({2}));
  g.add_node("Relu", {x}, {a1});
  g.add_node("Neg", {a1}, {b1});
  g.add_node("Relu", {x}, {a2});
  g.add_node("Neg", {a2}, {b2});
  g.add_node("Add", {b1, b2}, {y});
  g.add_output(y);
  CommonSubexpressions merged = merge_common_subexpressions(g);
  EXPECT_EQ(merged.nodes, 2);
  EXPECT_EQ(merged.constants, 0);
  ASSERT_EQ(g.num_nodes(), 3u);
  const Node& add = node_writing(g, "y");
  EXPECT_EQ(add.inputs[0], add.inputs[1]);
}

TEST(MergeCommonSubexpressionsTest, OpsWithARandomResultNeverMerge) {
  Graph g;
  ValueId x = g.add_input("x", f32({2}));
  ValueId r1 = g.add_value("r1", f32({2}));
  ValueId r2 = g.add_value("r2", f32({2}));
  ValueId y = g.add_value("y", f32({2}));
  g.add_node("RandomUniformLike", {x}, {r1});
  g.add_node("RandomUniformLike", {x}, {r2});
  g.add_node("Sub", {r1, r2}, {y});
  g.add_output(y);
  EXPECT_EQ(merge_common_subexpressions(g).nodes, 0);
  EXPECT_EQ(g.num_nodes(), 3u);
}

TEST(MergeCommonSubexpressionsTest, ConstantsWithEqualBytesButAnotherShapeStayApart) {
  Graph g;
  ValueId x = g.add_input("x", f32({1, 2}));
  ValueId row = f32_constant(g, "row", {1, 2}, {2});
  ValueId matrix = f32_constant(g, "matrix", {1, 2}, {1, 2});
  ValueId a = g.add_value("a", f32({1, 2}));
  ValueId b = g.add_value("b", f32({1, 2}));
  ValueId y = g.add_value("y", f32({1, 2}));
  g.add_node("Add", {x, row}, {a});
  g.add_node("Add", {x, matrix}, {b});
  g.add_node("Mul", {a, b}, {y});
  g.add_output(y);
  CommonSubexpressions merged = merge_common_subexpressions(g);
  EXPECT_EQ(merged.constants, 0);
  EXPECT_EQ(merged.nodes, 0);
  EXPECT_EQ(g.num_nodes(), 3u);
}

TEST(MergeCommonSubexpressionsTest, EqualConstantsMergeAndSoDoTheNodesReadingThem) {
  Graph g;
  ValueId x = g.add_input("x", f32({2}));
  ValueId a = g.add_value("a", f32({2}));
  ValueId b = g.add_value("b", f32({2}));
  ValueId y = g.add_value("y", f32({2}));
  g.add_node("Add", {x, f32_constant(g, "one", {1, 1}, {2})}, {a});
  g.add_node("Add", {x, f32_constant(g, "also_one", {1, 1}, {2})}, {b});
  g.add_node("Mul", {a, b}, {y});
  g.add_output(y);
  CommonSubexpressions merged = merge_common_subexpressions(g);
  EXPECT_EQ(merged.constants, 1);
  EXPECT_EQ(merged.nodes, 1);
  EXPECT_FALSE(g.find_value("also_one").has_value());
}

}  // namespace
}  // namespace collage
