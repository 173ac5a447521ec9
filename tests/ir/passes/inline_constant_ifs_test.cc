// inline_constant_ifs: an If whose condition is a constant becomes the
// branch it takes; the If's outputs keep their values and names.
#include "collage/ir/passes/inline_constant_ifs.h"

#include <gtest/gtest.h>

#include <memory>

#include "ir/passes/passes_test_util.h"

namespace collage {
namespace {

using testing::f32;

// A branch reading its one captured input: `op` of it, or the input itself
// when `op` is empty.
Subgraph branch(const std::string& op) {
  auto body = std::make_shared<Graph>();
  ValueId in = body->add_input("inner_x", f32({2}));
  body->captured = 1;
  if (op.empty()) {
    body->add_output(in);
    return body;
  }
  ValueId out = body->add_value(op + "_out", f32({2}));
  body->add_node(op, {in}, {out}, {}, op);
  body->add_output(out);
  return body;
}

// x -> If(cond; then: Relu, else: `else_op`) -> y -> Abs -> z
Graph graph_with_if(bool condition, const std::string& else_op) {
  Graph g;
  ValueId x = g.add_input("x", f32({2}));
  Tensor flag = Tensor::zeros(TensorType{DType::kBool, {1}});
  *flag.data<bool>() = condition;
  ValueId cond = g.add_constant("cond", flag);
  ValueId y = g.add_value("y", f32({2}));
  ValueId z = g.add_value("z", f32({2}));
  Attributes branches;
  branches.set("then_branch", branch("Relu"));
  branches.set("else_branch", branch(else_op));
  g.add_node("If", {cond, x}, {y}, branches, "choice");
  g.add_node("Abs", {y}, {z});
  g.add_output(z);
  return g;
}

TEST(InlineConstantIfsTest, TheTakenBranchTakesTheIfsPlace) {
  Graph g = graph_with_if(true, "Neg");
  EXPECT_EQ(inline_constant_ifs(g), 1);
  ASSERT_EQ(g.num_nodes(), 2u);
  EXPECT_EQ(g.node(0).op_type, "Relu");
  EXPECT_EQ(g.node(0).name, "choice/Relu");
  EXPECT_EQ(g.value(g.node(0).inputs[0]).name, "x");
  // The branch's result is the If's output value itself.
  EXPECT_EQ(g.value(g.node(0).outputs[0]).name, "y");
  EXPECT_EQ(g.node(1).op_type, "Abs");
}

TEST(InlineConstantIfsTest, ABranchHandingOnACapturedValueBecomesAnIdentity) {
  Graph g = graph_with_if(false, "");
  EXPECT_EQ(inline_constant_ifs(g), 1);
  ASSERT_EQ(g.num_nodes(), 2u);
  EXPECT_EQ(g.node(0).op_type, "Identity");
  EXPECT_EQ(g.value(g.node(0).inputs[0]).name, "x");
  EXPECT_EQ(g.value(g.node(0).outputs[0]).name, "y");
}

TEST(InlineConstantIfsTest, AnIfOnAValueKnownOnlyAtRunTimeStays) {
  Graph g = graph_with_if(true, "Neg");
  g.value(*g.find_value("cond")).constant.reset();
  EXPECT_EQ(inline_constant_ifs(g), 0);
  EXPECT_EQ(g.node(0).op_type, "If");
}

}  // namespace
}  // namespace collage
