// canonicalize: identities, Constant nodes and dead nodes go, folding
// repeats while type inference makes more shapes known, and an If whose
// condition folded gives way to its branch, whose Constant nodes fold too;
// a quantized unit spelled as PyTorch exports it is recognised.
#include "collage/ir/passes/canonicalize.h"

#include <gtest/gtest.h>

#include <memory>

#include "collage/ir/passes/partial_type.h"
#include "ir/passes/passes_test_util.h"
#include "onnx/shape_ops_evaluator.h"

namespace collage {
namespace {

using testing::f32;
using testing::i64;
using testing::ShapeOpsEvaluator;

TEST(CanonicalizeTest, RemovesIdentitiesConstantNodesAndDeadNodes) {
  Graph g;
  ValueId x = g.add_input("x", f32({2}));
  ValueId a = g.add_value("a", f32({2}));
  ValueId c = g.add_value("c", unknown_type());
  ValueId dead = g.add_value("dead", f32({2}));
  ValueId y = g.add_value("y", f32({2}));
  Attributes value;
  value.set("value", Tensor::from_vector<float>({1, 2}, {2}));
  g.add_node("Identity", {x}, {a});
  g.add_node("Constant", {}, {c}, value);
  g.add_node("Neg", {a}, {dead});
  g.add_node("Add", {a, c}, {y});
  g.add_output(y);
  CanonicalizeStats stats = canonicalize(g, {});
  EXPECT_EQ(stats.identities_removed, 1);
  EXPECT_EQ(stats.constant_nodes_replaced, 1);
  ASSERT_EQ(g.num_nodes(), 1u);
  EXPECT_EQ(g.node(0).op_type, "Add");
  EXPECT_FALSE(g.find_value("dead").has_value());
}

TEST(CanonicalizeTest, FoldingRepeatsAfterTypeInferenceMakesMoreShapesKnown) {
  // Gather's output type is unknown until its inputs are constants; the
  // stand-in for shape inference types it only then. (A Gather straight
  // from a Shape would fold from the type at once.)
  Graph g;
  ValueId x = g.add_input("x", f32({5, 6}));
  ValueId shape = g.add_value("shape", i64({2}));
  ValueId seven = g.add_constant("seven", Tensor::from_vector<std::int64_t>({7}, {1}));
  ValueId longer = g.add_value("longer", i64({3}));
  ValueId one = g.add_constant("one", Tensor::from_vector<std::int64_t>({1}, {}));
  ValueId dim = g.add_value("dim", unknown_type(DType::kInt64));
  ValueId y = g.add_value("y", f32({5, 6}));
  g.add_node("Shape", {x}, {shape});
  Attributes axis;
  axis.set("axis", std::int64_t{0});
  g.add_node("Concat", {shape, seven}, {longer}, axis);
  g.add_node("Gather", {longer, one}, {dim});
  g.add_node("Add", {x, dim}, {y});
  g.add_output(y);
  int inferences = 0;
  CanonicalizeOptions options;
  ShapeOpsEvaluator evaluator;
  options.evaluator = &evaluator;
  options.infer_types = [&inferences](Graph& graph) {
    ++inferences;
    for (const Node& node : graph.nodes()) {
      if (node.op_type == "Gather" && graph.value(node.inputs[0]).is_constant()) {
        graph.value(node.outputs[0]).type = i64({});
      }
    }
  };
  CanonicalizeStats stats = canonicalize(g, options);
  EXPECT_EQ(stats.nodes_folded, 3);
  EXPECT_EQ(stats.fold_rounds, 3);
  EXPECT_EQ(inferences, 2);
  ASSERT_EQ(g.num_nodes(), 1u);
  const Value& folded = g.value(*g.find_value("dim"));
  ASSERT_TRUE(folded.is_constant());
  EXPECT_EQ(folded.constant->int_at(0), 6);
}

// A branch of no inputs whose one node, a Constant, makes its output.
Subgraph constant_branch(std::int64_t number) {
  auto body = std::make_shared<Graph>();
  ValueId k = body->add_value("k", i64({1}));
  Attributes value;
  value.set("value", Tensor::from_vector<std::int64_t>({number}, {1}));
  body->add_node("Constant", {}, {k}, value, "k");
  body->add_output(k);
  return body;
}

TEST(CanonicalizeTest, AConstantNodeOfAnInlinedBranchFoldsWhatReadsIt) {
  // If(true) { Constant 4 } -> n; Concat(n, 7) -> longer; longer[0] -> dim.
  Graph g;
  ValueId x = g.add_input("x", f32({2}));
  Tensor flag = Tensor::zeros(TensorType{DType::kBool, {1}});
  *flag.data<bool>() = true;
  ValueId cond = g.add_constant("cond", flag);
  ValueId n = g.add_value("n", i64({1}));
  Attributes branches;
  branches.set("then_branch", constant_branch(4));
  branches.set("else_branch", constant_branch(5));
  g.add_node("If", {cond}, {n}, branches, "choice");
  ValueId seven = g.add_constant("seven", Tensor::from_vector<std::int64_t>({7}, {1}));
  ValueId longer = g.add_value("longer", i64({2}));
  Attributes axis;
  axis.set("axis", std::int64_t{0});
  g.add_node("Concat", {n, seven}, {longer}, axis);
  ValueId zero = g.add_constant("zero", Tensor::from_vector<std::int64_t>({0}, {}));
  ValueId dim = g.add_value("dim", i64({}));
  g.add_node("Gather", {longer, zero}, {dim});
  ValueId y = g.add_value("y", f32({2}));
  g.add_node("Add", {x, dim}, {y});
  g.add_output(y);
  CanonicalizeOptions options;
  ShapeOpsEvaluator evaluator;
  options.evaluator = &evaluator;
  options.infer_types = [](Graph&) {};
  CanonicalizeStats stats = canonicalize(g, options);
  EXPECT_EQ(stats.constant_nodes_replaced, 1);
  ASSERT_EQ(g.num_nodes(), 1u);
  EXPECT_EQ(g.node(0).op_type, "Add");
  // The then branch's number.
  const Value& folded = g.value(g.node(0).inputs[1]);
  ASSERT_TRUE(folded.is_constant());
  EXPECT_EQ(folded.constant->int_at(0), 4);
}

TEST(CanonicalizeTest, AQuantizedConvolutionSpelledAsPyTorchExportsItBecomesAQLinearConv) {
  // xq -Cast(to uint8)-> xc -DQ-> x; w -DQ(axis 0)-> wf; an int32 bias whose
  // zero point ConstantOfShape makes -DQ(axis 0)-> bf; Conv -> c -Q-> y.
  Graph g;
  auto scalar = [&](const char* name, auto number) {
    return g.add_constant(name, Tensor::from_vector<decltype(number)>({number}, {}));
  };
  ValueId xq = g.add_input("xq", TensorType{DType::kUInt8, {1, 2, 4, 4}});
  ValueId xc = g.add_value("xc", TensorType{DType::kUInt8, {1, 2, 4, 4}});
  Attributes to_uint8;
  to_uint8.set("to", std::int64_t{2});
  g.add_node("Cast", {xq}, {xc}, to_uint8);
  ValueId x = g.add_value("x", f32({1, 2, 4, 4}));
  g.add_node("DequantizeLinear", {xc, scalar("xs", 0.5f), scalar("xz", std::uint8_t{128})}, {x});
  Attributes axis0;
  axis0.set("axis", std::int64_t{0});
  ValueId wf = g.add_value("wf", f32({3, 2, 1, 1}));
  g.add_node(
      "DequantizeLinear",
      {g.add_constant("w", Tensor::from_vector<std::int8_t>({1, -2, 3, -4, 5, -6}, {3, 2, 1, 1})),
       g.add_constant("ws", Tensor::from_vector<float>({0.25f, 0.5f, 1.0f}, {3}))},
      {wf}, axis0);
  ValueId bz = g.add_value("bz", TensorType{DType::kInt32, {3}});
  g.add_node("ConstantOfShape", {g.add_constant("n", Tensor::from_vector<std::int64_t>({3}, {1}))},
             {bz});
  ValueId bf = g.add_value("bf", f32({3}));
  g.add_node("DequantizeLinear",
             {g.add_constant("bq", Tensor::from_vector<std::int32_t>({8, -4, 1}, {3})),
              g.add_constant("bs", Tensor::from_vector<float>({0.125f, 0.25f, 0.5f}, {3})), bz},
             {bf}, axis0);
  ValueId c = g.add_value("c", f32({1, 3, 4, 4}));
  g.add_node("Conv", {x, wf, bf}, {c});
  ValueId y = g.add_value("y", TensorType{DType::kUInt8, {1, 3, 4, 4}});
  g.add_node("QuantizeLinear", {c, scalar("ys", 0.1f), scalar("yz", std::uint8_t{0})}, {y});
  g.add_output(y);

  CanonicalizeOptions options;
  ShapeOpsEvaluator evaluator;
  options.evaluator = &evaluator;
  options.infer_types = [](Graph&) {};
  CanonicalizeStats stats = canonicalize(g, options);
  EXPECT_EQ(stats.count("DequantizeLinear + Conv + QuantizeLinear -> QLinearConv"), 1);
  EXPECT_EQ(stats.count("remove Cast to the same type"), 1);
  ASSERT_EQ(g.num_nodes(), 1u);
  const Node& conv = g.node(0);
  EXPECT_EQ(conv.op_type, "QLinearConv");
  ASSERT_EQ(conv.inputs.size(), 9u);
  EXPECT_EQ(g.value(conv.inputs[0]).name, "xq");
  EXPECT_EQ(g.value(conv.inputs[8]).name, "bq");
}

}  // namespace
}  // namespace collage
