// remove_identity_ops: pass-through ops (Identity, inference Dropout) go and
// their readers read their input; graph outputs keep their names.
#include "collage/ir/passes/remove_identity.h"

#include <gtest/gtest.h>

#include "ir/passes/passes_test_util.h"

namespace collage {
namespace {

using testing::f32;

TEST(RemoveIdentityTest, ReadersOfAnIdentityReadItsInput) {
  Graph g;
  ValueId x = g.add_input("x", f32({2}));
  ValueId a = g.add_value("a", f32({2}));
  ValueId y = g.add_value("y", f32({2}));
  g.add_node("Identity", {x}, {a});
  g.add_node("Relu", {a}, {y});
  g.add_output(y);
  EXPECT_EQ(remove_identity_ops(g), 1);
  ASSERT_EQ(g.num_nodes(), 1u);
  EXPECT_EQ(g.node(0).op_type, "Relu");
  EXPECT_EQ(g.value(g.node(0).inputs[0]).name, "x");
}

TEST(RemoveIdentityTest, AGraphOutputKeepsItsNameWhenItsIdentityIsRemoved) {
  Graph g;
  ValueId x = g.add_input("x", f32({2}));
  ValueId a = g.add_value("a", f32({2}));
  ValueId y = g.add_value("y", f32({2}));
  g.add_node("Relu", {x}, {a});
  g.add_node("Identity", {a}, {y});
  g.add_output(y);
  EXPECT_EQ(remove_identity_ops(g), 1);
  ASSERT_EQ(g.num_nodes(), 1u);
  ASSERT_EQ(g.outputs().size(), 1u);
  EXPECT_EQ(g.value(g.outputs()[0]).name, "y");
  EXPECT_EQ(g.node(0).outputs[0], g.outputs()[0]);
  EXPECT_EQ(g.find_value("y"), g.outputs()[0]);
  EXPECT_FALSE(g.find_value("a").has_value());
}

TEST(RemoveIdentityTest, AnIdentityFromAGraphInputToAGraphOutputStays) {
  Graph g;
  ValueId x = g.add_input("x", f32({2}));
  ValueId y = g.add_value("y", f32({2}));
  g.add_node("Identity", {x}, {y});
  g.add_output(y);
  EXPECT_EQ(remove_identity_ops(g), 0);
  EXPECT_EQ(g.num_nodes(), 1u);
}

TEST(RemoveIdentityTest, TwoOutputsAliasingOneValueKeepOneIdentity) {
  Graph g;
  ValueId x = g.add_input("x", f32({2}));
  ValueId a = g.add_value("a", f32({2}));
  ValueId y1 = g.add_value("y1", f32({2}));
  ValueId y2 = g.add_value("y2", f32({2}));
  g.add_node("Relu", {x}, {a});
  g.add_node("Identity", {a}, {y1});
  g.add_node("Identity", {a}, {y2});
  g.add_output(y1);
  g.add_output(y2);
  EXPECT_EQ(remove_identity_ops(g), 1);
  ASSERT_EQ(g.outputs().size(), 2u);
  EXPECT_EQ(g.value(g.outputs()[0]).name, "y1");
  EXPECT_EQ(g.value(g.outputs()[1]).name, "y2");
  EXPECT_EQ(g.num_nodes(), 2u);
}

TEST(RemoveIdentityTest, InferenceDropoutIsRemoved) {
  Graph g;
  ValueId x = g.add_input("x", f32({2}));
  ValueId ratio = g.add_constant("ratio", Tensor::from_vector<float>({0.5f}, {}));
  ValueId d = g.add_value("d", f32({2}));
  ValueId y = g.add_value("y", f32({2}));
  g.add_node("Dropout", {x, ratio}, {d});
  g.add_node("Relu", {d}, {y});
  g.add_output(y);
  EXPECT_EQ(remove_identity_ops(g), 1);
  ASSERT_EQ(g.num_nodes(), 1u);
  EXPECT_EQ(g.value(g.node(0).inputs[0]).name, "x");
}

TEST(RemoveIdentityTest, TrainingDropoutStays) {
  Graph g;
  ValueId x = g.add_input("x", f32({2}));
  ValueId training = g.add_constant("training", Tensor::from_vector<bool>({true}, {}));
  ValueId d = g.add_value("d", f32({2}));
  ValueId y = g.add_value("y", f32({2}));
  g.add_node("Dropout", {x, kNoValue, training}, {d});
  g.add_node("Relu", {d}, {y});
  g.add_output(y);
  EXPECT_EQ(remove_identity_ops(g), 0);
  EXPECT_EQ(g.num_nodes(), 2u);
}

TEST(RemoveIdentityTest, TrainingDropoutWithAZeroRatioIsRemoved) {
  Graph g;
  ValueId x = g.add_input("x", f32({2}));
  ValueId ratio = g.add_constant("ratio", Tensor::from_vector<float>({0.0f}, {}));
  ValueId training = g.add_constant("training", Tensor::from_vector<bool>({true}, {}));
  ValueId d = g.add_value("d", f32({2}));
  ValueId y = g.add_value("y", f32({2}));
  g.add_node("Dropout", {x, ratio, training}, {d});
  g.add_node("Relu", {d}, {y});
  g.add_output(y);
  EXPECT_EQ(remove_identity_ops(g), 1);
  EXPECT_EQ(g.num_nodes(), 1u);
}

TEST(RemoveIdentityTest, DropoutWhoseMaskIsReadStays) {
  Graph g;
  ValueId x = g.add_input("x", f32({2}));
  ValueId d = g.add_value("d", f32({2}));
  ValueId mask = g.add_value("mask", TensorType{DType::kBool, {2}});
  g.add_node("Dropout", {x}, {d, mask});
  g.add_output(d);
  g.add_output(mask);
  EXPECT_EQ(remove_identity_ops(g), 0);
}

}  // namespace
}  // namespace collage
