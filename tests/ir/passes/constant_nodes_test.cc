// constant_nodes_to_constants: Constant nodes become constant values of the
// type their attribute holds.
#include "collage/ir/passes/constant_nodes.h"

#include <gtest/gtest.h>

#include "collage/ir/passes/partial_type.h"
#include "ir/passes/passes_test_util.h"

namespace collage {
namespace {

using testing::f32;
using testing::i64;
using testing::ints;

TEST(ConstantNodesTest, AConstantNodeBecomesAConstantValue) {
  Graph g;
  ValueId x = g.add_input("x", f32({2}));
  ValueId c = g.add_value("c", unknown_type());
  ValueId y = g.add_value("y", f32({2}));
  Attributes attributes;
  attributes.set("value", Tensor::from_vector<float>({1.5f, 2.5f}, {2}));
  g.add_node("Constant", {}, {c}, attributes);
  g.add_node("Add", {x, c}, {y});
  g.add_output(y);
  EXPECT_EQ(constant_nodes_to_constants(g), 1);
  ASSERT_EQ(g.num_nodes(), 1u);
  const Value& value = g.value(*g.find_value("c"));
  ASSERT_TRUE(value.is_constant());
  EXPECT_EQ(value.type, f32({2}));
  EXPECT_EQ(value.constant->data<float>()[1], 2.5f);
  EXPECT_EQ(value.producer, kNoNode);
}

TEST(ConstantNodesTest, ValueIntsBecomeAnInt64Vector) {
  Graph g;
  ValueId x = g.add_input("x", f32({6}));
  ValueId c = g.add_value("c", unknown_type());
  ValueId y = g.add_value("y", f32({2, 3}));
  Attributes attributes;
  attributes.set("value_ints", std::vector<std::int64_t>{2, 3});
  g.add_node("Constant", {}, {c}, attributes);
  g.add_node("Reshape", {x, c}, {y});
  g.add_output(y);
  EXPECT_EQ(constant_nodes_to_constants(g), 1);
  const Value& value = g.value(c);
  ASSERT_TRUE(value.is_constant());
  EXPECT_EQ(value.type, i64({2}));
  EXPECT_EQ(ints(*value.constant), (std::vector<std::int64_t>{2, 3}));
}

TEST(ConstantNodesTest, AConstantNodeDefiningAGraphOutputStays) {
  Graph g;
  ValueId c = g.add_value("c", unknown_type());
  Attributes attributes;
  attributes.set("value_float", 1.0f);
  g.add_node("Constant", {}, {c}, attributes);
  g.add_output(c);
  EXPECT_EQ(constant_nodes_to_constants(g), 0);
  EXPECT_EQ(g.num_nodes(), 1u);
}

}  // namespace
}  // namespace collage
