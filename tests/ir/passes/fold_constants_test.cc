// fold_constants: nodes whose inputs are all constants become constants,
// computed by an OpEvaluator or, for Shape and Size, from static types.
#include "collage/ir/passes/fold_constants.h"

#include <gtest/gtest.h>

#include "collage/ir/error.h"
#include "collage/ir/passes/partial_type.h"
#include "ir/passes/passes_test_util.h"
#include "onnx/shape_ops_evaluator.h"

namespace collage {
namespace {

using testing::f32;
using testing::i64;
using testing::i64_constant;
using testing::ints;
using testing::ShapeOpsEvaluator;

// Claims every op and answers zeros of the graph's types.
class ZerosEvaluator : public OpEvaluator {
 public:
  bool can_evaluate(const Graph&, const Node&) const override { return true; }
  std::vector<Tensor> evaluate(const Graph& graph, const Node& node,
                               std::span<const Tensor>) const override {
    std::vector<Tensor> outputs;
    for (ValueId v : node.outputs) outputs.push_back(Tensor::zeros(graph.type(v)));
    return outputs;
  }
};

// Answers a tensor of the wrong shape.
class WrongShapeEvaluator : public OpEvaluator {
 public:
  bool can_evaluate(const Graph&, const Node&) const override { return true; }
  std::vector<Tensor> evaluate(const Graph&, const Node&, std::span<const Tensor>) const override {
    return {Tensor::zeros(f32({7}))};
  }
};

TEST(FoldConstantsTest, ANodeWithConstantInputsBecomesAConstant) {
  Graph g;
  ValueId x = g.add_input("x", i64({2}));
  ValueId a = i64_constant(g, "a", {1, 2});
  ValueId b = i64_constant(g, "b", {10, 20});
  ValueId s = g.add_value("s", i64({2}));
  ValueId y = g.add_value("y", i64({2}));
  g.add_node("Add", {a, b}, {s});
  g.add_node("Mul", {x, s}, {y});
  g.add_output(y);
  ShapeOpsEvaluator evaluator;
  EXPECT_EQ(fold_constants(g, &evaluator), 1);
  ASSERT_EQ(g.num_nodes(), 1u);
  EXPECT_EQ(g.node(0).op_type, "Mul");
  ASSERT_TRUE(g.value(s).is_constant());
  EXPECT_EQ(ints(*g.value(s).constant), (std::vector<std::int64_t>{11, 22}));
}

TEST(FoldConstantsTest, ShapeFoldsFromAStaticTypeWithoutAnEvaluator) {
  Graph g;
  ValueId x = g.add_input("x", f32({2, 3, 4}));
  ValueId s = g.add_value("s", i64({3}));
  ValueId y = g.add_value("y", f32({24}));
  g.add_node("Shape", {x}, {s});
  g.add_node("Reshape", {x, s}, {y});
  g.add_output(y);
  EXPECT_EQ(fold_constants(g, nullptr), 1);
  ASSERT_TRUE(g.value(s).is_constant());
  EXPECT_EQ(ints(*g.value(s).constant), (std::vector<std::int64_t>{2, 3, 4}));
}

TEST(FoldConstantsTest, ShapeHonoursStartAndEnd) {
  Graph g;
  g.opset = 15;
  ValueId x = g.add_input("x", f32({2, 3, 4, 5}));
  ValueId s = g.add_value("s", i64({2}));
  ValueId y = g.add_value("y", f32({2, 3, 4, 5}));
  Attributes attributes;
  attributes.set("start", std::int64_t{1});
  attributes.set("end", std::int64_t{-1});
  g.add_node("Shape", {x}, {s}, attributes);
  g.add_node("Expand", {x, s}, {y});
  g.add_output(y);
  EXPECT_EQ(fold_constants(g, nullptr), 1);
  EXPECT_EQ(ints(*g.value(s).constant), (std::vector<std::int64_t>{3, 4}));
}

TEST(FoldConstantsTest, SizeFoldsToTheElementCount) {
  Graph g;
  ValueId x = g.add_input("x", f32({2, 3}));
  ValueId n = g.add_value("n", i64({}));
  ValueId y = g.add_value("y", f32({2, 3}));
  g.add_node("Size", {x}, {n});
  g.add_node("Add", {x, n}, {y});
  g.add_output(y);
  EXPECT_EQ(fold_constants(g, nullptr), 1);
  EXPECT_EQ(g.value(n).constant->int_at(0), 6);
}

TEST(FoldConstantsTest, ShapeOfAValueWithUnknownDimensionsStays) {
  Graph g;
  ValueId x = g.add_input("x", f32({2}));
  ValueId r = g.add_value("r", f32({kUnknownDim}));
  ValueId s = g.add_value("s", i64({1}));
  ValueId y = g.add_value("y", f32({2}));
  g.add_node("NonZeroish", {x}, {r});
  g.add_node("Shape", {r}, {s});
  g.add_node("Expand", {x, s}, {y});
  g.add_output(y);
  EXPECT_EQ(fold_constants(g, nullptr), 0);
}

// x.view(x.size(0), -1) as PyTorch exports it.
TEST(FoldConstantsTest, AShapeGatherUnsqueezeConcatChainFoldsInOneSweep) {
  Graph g;
  ValueId x = g.add_input("x", f32({2, 3, 4}));
  ValueId shape = g.add_value("shape", i64({3}));
  ValueId zero = g.add_constant("zero", Tensor::from_vector<std::int64_t>({0}, {}));
  ValueId batch = g.add_value("batch", i64({}));
  ValueId axes = i64_constant(g, "axes", {0});
  ValueId batch1 = g.add_value("batch1", i64({1}));
  ValueId minus_one = i64_constant(g, "minus_one", {-1});
  ValueId target = g.add_value("target", i64({2}));
  ValueId y = g.add_value("y", f32({2, 12}));
  g.add_node("Shape", {x}, {shape});
  g.add_node("Gather", {shape, zero}, {batch});
  g.add_node("Unsqueeze", {batch, axes}, {batch1});
  g.add_node("Concat", {batch1, minus_one}, {target}, [] {
    Attributes a;
    a.set("axis", std::int64_t{0});
    return a;
  }());
  g.add_node("Reshape", {x, target}, {y});
  g.add_output(y);
  ShapeOpsEvaluator evaluator;
  EXPECT_EQ(fold_constants(g, &evaluator), 4);
  g.prune();
  ASSERT_EQ(g.num_nodes(), 1u);
  const Node& reshape = g.node(0);
  EXPECT_EQ(reshape.op_type, "Reshape");
  const Value& target_value = g.value(reshape.inputs[1]);
  ASSERT_TRUE(target_value.is_constant());
  EXPECT_EQ(ints(*target_value.constant), (std::vector<std::int64_t>{2, -1}));
}

TEST(FoldConstantsTest, NodesWhoseOutputWouldBeLargeStay) {
  Graph g;
  ValueId x = g.add_input("x", f32({1000}));
  ValueId shape = i64_constant(g, "shape", {1000});
  ValueId fill = g.add_value("fill", f32({1000}));
  ValueId y = g.add_value("y", f32({1000}));
  g.add_node("ConstantOfShape", {shape}, {fill});
  g.add_node("Add", {x, fill}, {y});
  g.add_output(y);
  ShapeOpsEvaluator evaluator;
  EXPECT_EQ(fold_constants(g, &evaluator, {.max_elements = 100}), 0);
  EXPECT_EQ(fold_constants(g, &evaluator, {.max_elements = 1000}), 1);
}

TEST(FoldConstantsTest, RandomOpsAreNeverFolded) {
  Graph g;
  ValueId c = g.add_constant("c", Tensor::zeros(f32({4})));
  ValueId r = g.add_value("r", f32({4}));
  ValueId x = g.add_input("x", f32({4}));
  ValueId y = g.add_value("y", f32({4}));
  g.add_node("RandomUniformLike", {c}, {r});
  g.add_node("Add", {x, r}, {y});
  g.add_output(y);
  ZerosEvaluator evaluator;
  EXPECT_EQ(fold_constants(g, &evaluator), 0);
}

TEST(FoldConstantsTest, NodesDefiningGraphOutputsAreNotFolded) {
  Graph g;
  ValueId c = g.add_constant("c", Tensor::zeros(f32({4})));
  ValueId y = g.add_value("y", f32({4}));
  g.add_node("Neg", {c}, {y});
  g.add_output(y);
  ZerosEvaluator evaluator;
  EXPECT_EQ(fold_constants(g, &evaluator), 0);
  EXPECT_EQ(g.num_nodes(), 1u);
}

TEST(FoldConstantsTest, AResultOfAnotherTypeThanTheGraphsIsAnErrorNamingTheNode) {
  Graph g;
  ValueId x = g.add_input("x", f32({4}));
  ValueId c = g.add_constant("c", Tensor::zeros(f32({4})));
  ValueId n = g.add_value("n", f32({4}));
  ValueId y = g.add_value("y", f32({4}));
  g.add_node("Neg", {c}, {n}, {}, "negate");
  g.add_node("Add", {x, n}, {y});
  g.add_output(y);
  WrongShapeEvaluator evaluator;
  try {
    fold_constants(g, &evaluator);
    FAIL() << "expected an Error";
  } catch (const Error& error) {
    EXPECT_EQ(error.where().node, "negate");
  }
}

}  // namespace
}  // namespace collage
