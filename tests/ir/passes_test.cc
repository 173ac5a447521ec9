#include <gtest/gtest.h>

#include "collage/ir/error.h"
#include "collage/ir/passes/canonicalize.h"
#include "collage/ir/passes/constant_nodes.h"
#include "collage/ir/passes/fold_constants.h"
#include "collage/ir/passes/partial_type.h"
#include "collage/ir/passes/remove_identity.h"
#include "onnx/shape_ops_evaluator.h"

namespace collage {
namespace {

using testing::ShapeOpsEvaluator;

TensorType f32(Shape shape) { return TensorType{DType::kFloat32, std::move(shape)}; }
TensorType i64(Shape shape) { return TensorType{DType::kInt64, std::move(shape)}; }

ValueId i64_constant(Graph& g, const std::string& name, const std::vector<std::int64_t>& values) {
  return g.add_constant(name,
                        Tensor::from_vector(values, {static_cast<std::int64_t>(values.size())}));
}

std::vector<std::int64_t> ints(const Tensor& tensor) {
  std::vector<std::int64_t> values;
  for (std::int64_t i = 0; i < tensor.numel(); ++i) values.push_back(tensor.int_at(i));
  return values;
}

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
  // stand-in for shape inference types it only then.
  Graph g;
  ValueId x = g.add_input("x", f32({5, 6}));
  ValueId shape = g.add_value("shape", i64({2}));
  ValueId one = g.add_constant("one", Tensor::from_vector<std::int64_t>({1}, {}));
  ValueId dim = g.add_value("dim", unknown_type(DType::kInt64));
  ValueId y = g.add_value("y", f32({5, 6}));
  g.add_node("Shape", {x}, {shape});
  g.add_node("Gather", {shape, one}, {dim});
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
  EXPECT_EQ(stats.nodes_folded, 2);
  EXPECT_EQ(stats.fold_rounds, 3);
  EXPECT_EQ(inferences, 2);
  ASSERT_EQ(g.num_nodes(), 1u);
  const Value& folded = g.value(*g.find_value("dim"));
  ASSERT_TRUE(folded.is_constant());
  EXPECT_EQ(folded.constant->int_at(0), 6);
}

}  // namespace
}  // namespace collage
