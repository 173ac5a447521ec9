// The graph rewrites of ir/passes: each rewritten graph computes what the
// original computed, checked by running both with the reference executor,
// and the rewrite leaves what it should and only that.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <stdexcept>

#include "collage/backends/native/native_backend.h"
#include "collage/ir/passes/cancel_transposes.h"
#include "collage/ir/passes/canonicalize.h"
#include "collage/ir/passes/collapse_reshapes.h"
#include "collage/ir/passes/fold_channel_affine.h"
#include "collage/ir/passes/fold_pads.h"
#include "collage/ir/passes/fuse_activations.h"
#include "collage/ir/passes/fuse_group_norm.h"
#include "collage/ir/passes/fuse_layer_norm.h"
#include "collage/ir/passes/fuse_matmul_add.h"
#include "collage/ir/passes/merge_common_subexpressions.h"
#include "collage/ir/passes/remove_identity.h"
#include "collage/ir/passes/trim_conv_taps.h"
#include "collage/runtime/random_inputs.h"

namespace collage {
namespace {

TensorType f32(Shape shape) { return TensorType{DType::kFloat32, std::move(shape)}; }

Tensor random_tensor(const Shape& shape, std::uint32_t seed, float low, float high) {
  Tensor tensor = Tensor::allocate(f32(shape));
  std::mt19937 engine(seed);
  std::uniform_real_distribution<float> distribution(low, high);
  for (std::int64_t i = 0; i < tensor.numel(); ++i) tensor.data<float>()[i] = distribution(engine);
  return tensor;
}

// x[1,4,6,6] -> conv (kernel 3, pads 1, `group`) -> BatchNormalization -> Relu
Graph conv_bn_relu(const std::string& conv_op, std::int64_t group, bool with_bias,
                   bool bn_output_is_graph_output = false) {
  Graph g;
  g.opset = 13;
  const std::int64_t channels = 6;
  ValueId x = g.add_input("x", f32({1, 4, 6, 6}));
  Shape weight_shape =
      conv_op == "Conv" ? Shape{channels, 4 / group, 3, 3} : Shape{4, channels, 3, 3};
  std::vector<ValueId> inputs = {x, g.add_constant("w", random_tensor(weight_shape, 1, -1, 1))};
  if (with_bias) inputs.push_back(g.add_constant("b", random_tensor({channels}, 2, -1, 1)));
  ValueId conv = g.add_value("conv", f32({1, channels, 6, 6}));
  Attributes attributes;
  attributes.set("pads", std::vector<std::int64_t>{1, 1, 1, 1});
  attributes.set("group", group);
  g.add_node(conv_op, inputs, {conv}, attributes, "conv_node");
  ValueId bn = g.add_value("bn", f32({1, channels, 6, 6}));
  Attributes bn_attributes;
  bn_attributes.set("epsilon", 1e-3f);
  g.add_node("BatchNormalization",
             {conv, g.add_constant("scale", random_tensor({channels}, 3, 0.5f, 1.5f)),
              g.add_constant("shift", random_tensor({channels}, 4, -1, 1)),
              g.add_constant("mean", random_tensor({channels}, 5, -1, 1)),
              g.add_constant("var", random_tensor({channels}, 6, 0.2f, 2.0f))},
             {bn}, bn_attributes, "bn_node");
  ValueId y = g.add_value("y", f32({1, channels, 6, 6}));
  g.add_node("Relu", {bn}, {y}, {}, "relu_node");
  if (bn_output_is_graph_output) g.add_output(bn);
  g.add_output(y);
  return g;
}

std::vector<Tensor> run_reference(const Graph& graph, const std::map<std::string, Tensor>& named) {
  std::vector<Tensor> inputs;
  for (ValueId id : graph.inputs()) inputs.push_back(named.at(graph.value(id).name));
  std::vector<Tensor> outputs;
  for (ValueId id : graph.outputs()) outputs.push_back(Tensor::allocate(graph.type(id)));
  compile_reference(graph, 1)->run(inputs, outputs);
  return outputs;
}

void expect_same_outputs(const Graph& before, const Graph& after) {
  ASSERT_EQ(before.outputs().size(), after.outputs().size());
  for (std::size_t i = 0; i < before.outputs().size(); ++i) {
    EXPECT_EQ(before.value(before.outputs()[i]).name, after.value(after.outputs()[i]).name);
  }
  std::map<std::string, Tensor> inputs = random_inputs(before);
  std::vector<Tensor> expected = run_reference(before, inputs);
  std::vector<Tensor> actual = run_reference(after, inputs);
  for (std::size_t i = 0; i < expected.size(); ++i) {
    for (std::int64_t j = 0; j < expected[i].numel(); ++j) {
      ASSERT_NEAR(actual[i].data<float>()[j], expected[i].data<float>()[j], 2e-4) << "at " << j;
    }
  }
}

int count_ops(const Graph& graph, const std::string& op) {
  int n = 0;
  for (const Node& node : graph.nodes()) n += node.op_type == op ? 1 : 0;
  return n;
}

// Builds small float32 graphs one op at a time.
class Builder {
 public:
  Builder() { graph_.opset = 13; }

  ValueId input(const std::string& name, Shape shape) { return graph_.add_input(name, f32(shape)); }
  ValueId constant(Tensor tensor) { return graph_.add_constant(next_name("c"), std::move(tensor)); }
  ValueId scalar(float value) {
    return constant(Tensor::from_vector(std::vector<float>{value}, {}));
  }
  ValueId random(Shape shape, float low = -1, float high = 1) {
    return constant(random_tensor(shape, ++seed_, low, high));
  }
  ValueId ints(std::vector<std::int64_t> values) {
    const auto n = static_cast<std::int64_t>(values.size());
    return constant(Tensor::from_vector(values, {n}));
  }
  // A node of `op` writing one float32 value of `shape`.
  ValueId op(const std::string& op, std::vector<ValueId> inputs, Shape shape,
             Attributes attributes = {}) {
    ValueId out = graph_.add_value(next_name(op), f32(std::move(shape)));
    graph_.add_node(op, std::move(inputs), {out}, std::move(attributes));
    return out;
  }
  // Like op(), with the shape of input 0.
  ValueId same(const std::string& op, std::vector<ValueId> inputs, Attributes attributes = {}) {
    Shape shape = graph_.type(inputs[0]).shape;
    return this->op(op, std::move(inputs), shape, std::move(attributes));
  }
  // Shape(x), an int64 value.
  ValueId shape_of(ValueId x) {
    const auto rank = static_cast<std::int64_t>(graph_.type(x).rank());
    ValueId out = graph_.add_value(next_name("shape"), TensorType{DType::kInt64, {rank}});
    graph_.add_node("Shape", {x}, {out});
    return out;
  }
  Graph finish(std::vector<ValueId> outputs) {
    for (ValueId out : outputs) graph_.add_output(out);
    return graph_;
  }

 private:
  std::string next_name(const std::string& prefix) { return prefix + std::to_string(++count_); }

  Graph graph_;
  int count_ = 0;
  std::uint32_t seed_ = 100;
};

Attributes ints_attribute(const std::string& name, std::vector<std::int64_t> values) {
  Attributes attributes;
  attributes.set(name, std::move(values));
  return attributes;
}

// Applies `rewrite` to a copy of `original`, checks the count it returns and
// that the outputs are unchanged, and returns the rewritten graph.
template <typename Rewrite>
Graph rewritten(const Graph& original, Rewrite rewrite, int expected_count) {
  Graph graph = original;
  EXPECT_EQ(rewrite(graph), expected_count);
  expect_same_outputs(original, graph);
  return graph;
}

int batch_norms(Graph& g) { return fold_channel_affine(g).batch_norms; }

TEST(FoldChannelAffineTest, FoldsABatchNormIntoAConvWithBiasAndKeepsItsOutputs) {
  Graph folded = rewritten(conv_bn_relu("Conv", 1, true), batch_norms, 1);
  EXPECT_EQ(count_ops(folded, "BatchNormalization"), 0);
}

TEST(FoldChannelAffineTest, GivesABiasToAConvWithoutOne) {
  rewritten(conv_bn_relu("Conv", 1, false), batch_norms, 1);
}

TEST(FoldChannelAffineTest, FoldsIntoAGroupedConv) {
  rewritten(conv_bn_relu("Conv", 2, true), batch_norms, 1);
}

TEST(FoldChannelAffineTest, FoldsIntoAConvTransposeAlongItsOutputChannels) {
  rewritten(conv_bn_relu("ConvTranspose", 1, true), batch_norms, 1);
}

TEST(FoldChannelAffineTest, KeepsTheNormalizedValueAGraphOutputUnderItsName) {
  rewritten(conv_bn_relu("Conv", 1, true, true), batch_norms, 1);
}

TEST(FoldChannelAffineTest, LeavesABatchNormWhoseInputIsAlsoReadElsewhere) {
  Graph graph = conv_bn_relu("Conv", 1, true);
  // The convolution's output is also a graph output: folding would change it.
  graph.add_output(*graph.find_value("conv"));
  EXPECT_EQ(fold_channel_affine(graph).total(), 0);
  EXPECT_EQ(count_ops(graph, "BatchNormalization"), 1);
}

// x[1,3,5,5] -> Conv(4 channels) -> op(constant of `shape`) -> Relu
Graph conv_then(const std::string& op, Shape constant_shape) {
  Builder b;
  ValueId x = b.input("x", {1, 3, 5, 5});
  ValueId conv = b.op("Conv", {x, b.random({4, 3, 3, 3}), b.random({4})}, {1, 4, 3, 3});
  ValueId affine = b.same(op, {conv, b.random(constant_shape, 0.5f, 2.0f)});
  return b.finish({b.same("Relu", {affine})});
}

TEST(FoldChannelAffineTest, FoldsPerChannelScalesAndShiftsOfEveryForm) {
  EXPECT_EQ(
      rewritten(
          conv_then("Mul", {4, 1, 1}), [](Graph& g) { return fold_channel_affine(g).scales; }, 1)
          .num_nodes(),
      2u);
  rewritten(
      conv_then("Div", {1, 4, 1, 1}), [](Graph& g) { return fold_channel_affine(g).scales; }, 1);
  rewritten(
      conv_then("Add", {4, 1, 1}), [](Graph& g) { return fold_channel_affine(g).shifts; }, 1);
  rewritten(
      conv_then("Sub", {1}), [](Graph& g) { return fold_channel_affine(g).shifts; }, 1);
}

TEST(FoldChannelAffineTest, LeavesAConstantThatVariesAlongSpace) {
  rewritten(
      conv_then("Mul", {4, 3, 1}), [](Graph& g) { return fold_channel_affine(g).total(); }, 0);
  rewritten(
      conv_then("Add", {3, 3}), [](Graph& g) { return fold_channel_affine(g).total(); }, 0);
}

TEST(FoldChannelAffineTest, FoldsABatchNormAfterAGemmWithTransposedWeights) {
  Builder b;
  ValueId x = b.input("x", {2, 6});
  Attributes gemm;
  gemm.set("transB", std::int64_t{1});
  gemm.set("beta", 0.5f);
  ValueId y = b.op("Gemm", {x, b.random({5, 6}), b.random({5})}, {2, 5}, gemm);
  ValueId bn = b.same("BatchNormalization", {y, b.random({5}, 0.5f, 1.5f), b.random({5}),
                                             b.random({5}), b.random({5}, 0.2f, 2.0f)});
  rewritten(
      b.finish({bn}), [](Graph& g) { return fold_channel_affine(g).batch_norms; }, 1);
}

TEST(FoldChannelAffineTest, FoldsAScaleButNotAShiftIntoAMatMul) {
  Builder b;
  ValueId x = b.input("x", {2, 3, 6});
  ValueId y = b.op("MatMul", {x, b.random({6, 5})}, {2, 3, 5});
  ValueId scaled = b.same("Mul", {y, b.random({5})});
  ValueId shifted = b.same("Add", {scaled, b.random({5})});
  Graph graph = rewritten(
      b.finish({shifted}), [](Graph& g) { return fold_channel_affine(g).total(); }, 1);
  EXPECT_EQ(count_ops(graph, "Add"), 1);
}

TEST(FoldChannelAffineTest, FoldsABatchNormAfterAMatMulIntoItsColumnsAndAnAdd) {
  Builder b;
  ValueId x = b.input("x", {3, 6});
  ValueId y = b.op("MatMul", {x, b.random({6, 5})}, {3, 5});
  ValueId bn = b.same("BatchNormalization", {y, b.random({5}, 0.5f, 1.5f), b.random({5}),
                                             b.random({5}), b.random({5}, 0.2f, 2.0f)});
  Graph graph = rewritten(b.finish({bn}), batch_norms, 1);
  EXPECT_EQ(count_ops(graph, "Add"), 1);
  EXPECT_EQ(fuse_matmul_add(graph), 1);
  EXPECT_EQ(count_ops(graph, "Gemm"), 1);
}

TEST(FuseMatMulAddTest, TurnsAMatMulWithABiasIntoAGemm) {
  Builder b;
  ValueId x = b.input("x", {4, 8});
  ValueId y = b.op("MatMul", {x, b.random({8, 5})}, {4, 5});
  ValueId z = b.op("Add", {b.random({5}), y}, {4, 5});
  Graph graph = rewritten(b.finish({z}), fuse_matmul_add, 1);
  EXPECT_EQ(count_ops(graph, "Gemm"), 1);
  EXPECT_EQ(graph.num_nodes(), 1u);
}

TEST(FuseMatMulAddTest, LeavesABatchedMatMul) {
  Builder b;
  ValueId x = b.input("x", {2, 4, 8});
  ValueId y = b.op("MatMul", {x, b.random({8, 5})}, {2, 4, 5});
  rewritten(b.finish({b.same("Add", {y, b.random({5})})}), fuse_matmul_add, 0);
}

TEST(CancelTransposesTest, RemovesAPairThatCancelsAndKeepsTheOutputName) {
  Builder b;
  ValueId x = b.input("x", {2, 3, 4});
  ValueId r = b.same("Relu", {x});
  ValueId t1 = b.op("Transpose", {r}, {4, 2, 3}, ints_attribute("perm", {2, 0, 1}));
  ValueId t2 = b.op("Transpose", {t1}, {2, 3, 4}, ints_attribute("perm", {1, 2, 0}));
  Graph graph = rewritten(b.finish({t2}), cancel_transposes, 2);
  EXPECT_EQ(graph.num_nodes(), 1u);
}

TEST(CancelTransposesTest, ComposesAPairThatDoesNotCancel) {
  Builder b;
  ValueId x = b.input("x", {2, 3, 4});
  ValueId t1 = b.op("Transpose", {x}, {3, 2, 4}, ints_attribute("perm", {1, 0, 2}));
  ValueId t2 = b.op("Transpose", {t1}, {4, 3, 2}, ints_attribute("perm", {2, 0, 1}));
  Graph graph = rewritten(b.finish({t2}), cancel_transposes, 1);
  EXPECT_EQ(count_ops(graph, "Transpose"), 1);
}

TEST(CollapseReshapesTest, MakesOneReshapeOfAChain) {
  Builder b;
  ValueId x = b.input("x", {2, 3, 4});
  ValueId r = b.same("Relu", {x});
  ValueId flat = b.op("Flatten", {r}, {2, 12});
  ValueId up = b.op("Unsqueeze", {flat, b.ints({0})}, {1, 2, 12});
  ValueId shaped = b.op("Reshape", {up, b.ints({4, 6})}, {4, 6});
  Graph graph = rewritten(b.finish({b.same("Relu", {shaped})}), collapse_reshapes, 2);
  EXPECT_EQ(count_ops(graph, "Reshape"), 1);
}

TEST(CollapseReshapesTest, RemovesAChainThatEndsInTheShapeItStarted) {
  Builder b;
  ValueId x = b.input("x", {2, 3});
  ValueId r = b.same("Relu", {x});
  ValueId up = b.op("Unsqueeze", {r, b.ints({1})}, {2, 1, 3});
  ValueId down = b.op("Squeeze", {up, b.ints({1})}, {2, 3});
  Graph graph = rewritten(b.finish({b.same("Relu", {down})}), collapse_reshapes, 2);
  EXPECT_EQ(graph.num_nodes(), 2u);
}

TEST(RemoveNoOpCastsTest, RemovesACastToTheSameType) {
  Builder b;
  ValueId x = b.input("x", {2, 3});
  Attributes to;
  to.set("to", std::int64_t{1});
  ValueId c = b.same("Cast", {b.same("Relu", {x})}, to);
  Graph graph = rewritten(b.finish({c}), remove_no_op_casts, 1);
  EXPECT_EQ(count_ops(graph, "Cast"), 0);
}

TEST(MergeCommonSubexpressionsTest, MergesEqualConstantsAndThenTheNodesReadingThem) {
  Builder b;
  ValueId x = b.input("x", {2, 3});
  ValueId a = b.same("Add", {x, b.scalar(2.0f)});
  ValueId c = b.same("Add", {x, b.scalar(2.0f)});
  ValueId d = b.same("Relu", {a});
  ValueId e = b.same("Relu", {c});
  Graph graph = rewritten(
      b.finish({b.same("Mul", {d, e})}),
      [](Graph& g) { return merge_common_subexpressions(g).nodes; }, 2);
  EXPECT_EQ(graph.num_nodes(), 3u);
}

TEST(MergeCommonSubexpressionsTest, KeepsNodesThatDifferInAnAttribute) {
  Builder b;
  ValueId x = b.input("x", {2, 3});
  Attributes slope_a;
  slope_a.set("alpha", 0.1f);
  Attributes slope_b;
  slope_b.set("alpha", 0.2f);
  ValueId a = b.same("LeakyRelu", {x}, slope_a);
  ValueId c = b.same("LeakyRelu", {x}, slope_b);
  rewritten(
      b.finish({b.same("Add", {a, c})}),
      [](Graph& g) { return merge_common_subexpressions(g).nodes; }, 0);
}

// x[2,3,8] -> LayerNorm chain over the last axis.
Graph layer_norm_chain(bool square_by_mul, bool affine) {
  Builder b;
  ValueId x = b.input("x", {2, 3, 8});
  Attributes last = ints_attribute("axes", {-1});
  ValueId mean = b.op("ReduceMean", {x}, {2, 3, 1}, last);
  ValueId d = b.same("Sub", {x, mean});
  ValueId sq = square_by_mul ? b.same("Mul", {d, d}) : b.same("Pow", {d, b.scalar(2.0f)});
  ValueId var = b.op("ReduceMean", {sq}, {2, 3, 1}, last);
  ValueId std = b.same("Sqrt", {b.same("Add", {var, b.scalar(1e-5f)})});
  ValueId y = b.same("Div", {d, std});
  if (affine) y = b.same("Add", {b.same("Mul", {y, b.random({8})}), b.random({1, 8})});
  return b.finish({y});
}

TEST(FuseLayerNormTest, FusesTheChainWithScaleAndBias) {
  Graph graph = rewritten(layer_norm_chain(false, true), fuse_layer_norm, 1);
  EXPECT_EQ(graph.num_nodes(), 1u);
  EXPECT_EQ(count_ops(graph, "LayerNormalization"), 1);
}

TEST(FuseLayerNormTest, FusesTheChainWithASquareByMulAndNoAffine) {
  Graph graph = rewritten(layer_norm_chain(true, false), fuse_layer_norm, 1);
  EXPECT_EQ(graph.num_nodes(), 1u);
}

// x[2,8,5,5] -> Relu -> PyTorch's GroupNorm with 4 groups before opset 18:
// Reshape to [N, G, -1], InstanceNormalization with a scale and bias per
// group, Reshape back (to Shape(x) when `shape_op`, else a constant), then
// a Mul by `gamma_shape` and an Add by a per-channel constant when `affine`.
Graph group_norm_chain(bool shape_op, bool affine, Shape gamma_shape = {8, 1, 1},
                       std::vector<std::int64_t> grouping = {0, 4, -1}) {
  Builder b;
  ValueId x = b.same("Relu", {b.input("x", {2, 8, 5, 5})});
  const std::int64_t rows = grouping[0] == 0 ? 2 : grouping[0];
  const Shape grouped = {rows, grouping[1], 400 / rows / grouping[1]};
  ValueId g = b.op("Reshape", {x, b.ints(grouping)}, grouped);
  Attributes epsilon;
  epsilon.set("epsilon", 1e-3f);
  ValueId n =
      b.op("InstanceNormalization",
           {g, b.random({grouping[1]}, 0.5f, 1.5f), b.random({grouping[1]})}, grouped, epsilon);
  ValueId target = b.ints({2, 8, 5, 5});
  if (shape_op) target = b.shape_of(x);
  ValueId y = b.op("Reshape", {n, target}, {2, 8, 5, 5});
  if (affine)
    y = b.same("Add", {b.same("Mul", {y, b.random(gamma_shape)}), b.random({1, 8, 1, 1})});
  return b.finish({y});
}

TEST(FuseGroupNormTest, FusesTheChainWithShapeOfXAndAPerChannelAffine) {
  Graph graph = rewritten(group_norm_chain(true, true), fuse_group_norm, 1);
  EXPECT_EQ(graph.num_nodes(), 2u);  // Relu, GroupNormalization
  ASSERT_EQ(count_ops(graph, "GroupNormalization"), 1);
  for (const Node& node : graph.nodes()) {
    if (node.op_type != "GroupNormalization") continue;
    EXPECT_EQ(node.attributes.get_int("num_groups"), 4);
    EXPECT_FLOAT_EQ(node.attributes.get_float("epsilon"), 1e-3f);
    EXPECT_EQ(graph.type(node.input(1)).shape, (Shape{8}));
  }
}

TEST(FuseGroupNormTest, FusesTheChainWithAConstantShapeAndNoAffine) {
  Graph graph = rewritten(group_norm_chain(false, false), fuse_group_norm, 1);
  EXPECT_EQ(graph.num_nodes(), 2u);
}

TEST(FuseGroupNormTest, LeavesAScaleThatVariesAlongSpaceAfterTheFusedNode) {
  Graph graph = rewritten(group_norm_chain(true, true, {1, 5, 5}), fuse_group_norm, 1);
  EXPECT_EQ(count_ops(graph, "GroupNormalization"), 1);
  EXPECT_EQ(count_ops(graph, "Mul"), 1);
}

TEST(FuseGroupNormTest, LeavesAReshapeThatMixesImagesAndGroups) {
  Graph graph = rewritten(group_norm_chain(true, true, {8, 1, 1}, {8, 1, -1}), fuse_group_norm, 0);
  EXPECT_EQ(count_ops(graph, "InstanceNormalization"), 1);
}

// x -> Relu -> Gelu chain (the factors grouped as `grouping` says) -> out
Graph gelu_erf_chain(int grouping) {
  Builder b;
  ValueId x = b.same("Relu", {b.input("x", {2, 16})});
  x = b.same("Sub", {x, b.scalar(0.5f)});
  ValueId t = grouping == 0 ? b.same("Div", {x, b.scalar(1.4142135f)})
                            : b.same("Mul", {x, b.scalar(0.70710677f)});
  ValueId a = b.same("Add", {b.same("Erf", {t}), b.scalar(1.0f)});
  ValueId y = grouping == 0 ? b.same("Mul", {b.same("Mul", {x, a}), b.scalar(0.5f)})
                            : b.same("Mul", {b.op("Mul", {b.scalar(0.5f), x}, {2, 16}), a});
  return b.finish({y});
}

TEST(FuseGeluTest, FusesTheErfFormInEitherGrouping) {
  for (int grouping : {0, 1}) {
    Graph graph = rewritten(gelu_erf_chain(grouping), fuse_gelu, 1);
    EXPECT_EQ(count_ops(graph, "Gelu"), 1);
    EXPECT_EQ(graph.num_nodes(), 3u);
  }
}

Graph gelu_tanh_chain(bool cube_by_pow) {
  Builder b;
  ValueId x = b.same("Sub", {b.input("x", {2, 16}), b.scalar(0.25f)});
  ValueId cube =
      cube_by_pow ? b.same("Pow", {x, b.scalar(3.0f)}) : b.same("Mul", {b.same("Mul", {x, x}), x});
  ValueId inner = b.same("Add", {x, b.same("Mul", {cube, b.scalar(0.044715f)})});
  ValueId th = b.same("Tanh", {b.op("Mul", {b.scalar(0.7978846f), inner}, {2, 16})});
  ValueId a = b.op("Add", {b.scalar(1.0f), th}, {2, 16});
  return b.finish({b.same("Mul", {b.same("Mul", {x, b.scalar(0.5f)}), a})});
}

TEST(FuseGeluTest, FusesTheTanhFormWithEitherCube) {
  for (bool by_pow : {true, false}) {
    Graph graph = rewritten(gelu_tanh_chain(by_pow), fuse_gelu, 1);
    EXPECT_EQ(graph.num_nodes(), 2u);
    EXPECT_EQ(graph.node(1).attributes.get_string("approximate"), "tanh");
  }
}

TEST(FuseGeluTest, LeavesAChainWithAnotherConstant) {
  Builder b;
  ValueId x = b.input("x", {2, 16});
  ValueId a = b.same("Add", {b.same("Erf", {b.same("Div", {x, b.scalar(2.0f)})}), b.scalar(1.0f)});
  rewritten(b.finish({b.same("Mul", {b.same("Mul", {x, a}), b.scalar(0.5f)})}), fuse_gelu, 0);
}

TEST(FuseSwishTest, FusesXTimesSigmoidWithAndWithoutAScale) {
  for (float alpha : {1.0f, 1.702f}) {
    Builder b;
    ValueId x = b.input("x", {2, 16});
    ValueId z = alpha == 1.0f ? x : b.same("Mul", {x, b.scalar(alpha)});
    ValueId y = b.same("Mul", {b.same("Sigmoid", {z}), x});
    Graph graph = rewritten(b.finish({y}), fuse_swish, 1);
    ASSERT_EQ(graph.num_nodes(), 1u);
    EXPECT_EQ(graph.node(0).op_type, "Swish");
    EXPECT_FLOAT_EQ(graph.node(0).attributes.get_float("alpha"), alpha);
  }
}

// x -> clip(x + 3, 0, 6) [-> * x] -> / 6
Graph relu6_chain(bool times_x) {
  Builder b;
  ValueId x = b.input("x", {2, 16});
  ValueId clip =
      b.same("Clip", {b.same("Add", {x, b.scalar(3.0f)}), b.scalar(0.0f), b.scalar(6.0f)});
  ValueId y = times_x ? b.same("Mul", {x, clip}) : clip;
  return b.finish({b.same("Div", {y, b.scalar(6.0f)})});
}

TEST(FuseHardActivationsTest, FusesClipOfAShiftOverItsMaxIntoHardSigmoid) {
  Graph graph = rewritten(relu6_chain(false), fuse_hard_sigmoid, 1);
  ASSERT_EQ(graph.num_nodes(), 1u);
  EXPECT_NEAR(graph.node(0).attributes.get_float("alpha"), 1 / 6.0, 1e-7);
  EXPECT_NEAR(graph.node(0).attributes.get_float("beta"), 0.5, 1e-7);
}

TEST(FuseHardActivationsTest, FusesBothHardSwishForms) {
  rewritten(relu6_chain(true), fuse_hard_swish, 1);
  Builder b;
  ValueId x = b.input("x", {2, 16});
  Attributes hard;
  hard.set("alpha", 1 / 6.0f);
  ValueId y = b.same("Mul", {x, b.same("HardSigmoid", {x}, hard)});
  Graph graph = rewritten(b.finish({y}), fuse_hard_swish, 1);
  EXPECT_EQ(count_ops(graph, "HardSwish"), 1);
}

// x[1,3,7,7] -> Pad(pads, value) -> one reader of the padded tensor.
struct PadThen {
  Builder b;
  ValueId x = b.input("x", {1, 3, 7, 7});
  ValueId padded;

  PadThen(std::vector<std::int64_t> pads, float value = 0.0f) {
    Shape shape = {1, 3, 7, 7};
    for (std::size_t d = 0; d < 4; ++d) shape[d] += pads[d] + pads[d + 4];
    padded = b.op("Pad", {x, b.ints(std::move(pads)), b.scalar(value)}, shape);
  }
};

Attributes pool_attributes(std::vector<std::int64_t> kernel, std::vector<std::int64_t> strides) {
  Attributes attributes = ints_attribute("kernel_shape", std::move(kernel));
  attributes.set("strides", std::move(strides));
  return attributes;
}

const Node& only(const Graph& graph, const std::string& op) {
  for (const Node& node : graph.nodes()) {
    if (node.op_type == op) return node;
  }
  throw std::runtime_error("no " + op);
}

TEST(FoldPadsTest, FoldsPyTorchsPaddedAveragePoolIntoOneThatCountsThePads) {
  PadThen p({0, 0, 1, 1, 0, 0, 1, 1});
  ValueId y = p.b.op("AveragePool", {p.padded}, {1, 3, 7, 7}, pool_attributes({3, 3}, {1, 1}));
  Graph graph = rewritten(p.b.finish({y}), fold_pads, 1);
  EXPECT_EQ(count_ops(graph, "Pad"), 0);
  const Node& pool = only(graph, "AveragePool");
  EXPECT_EQ(pool.attributes.get_int("count_include_pad"), 1);
  EXPECT_EQ(pool.attributes.get_ints("pads"), (std::vector<std::int64_t>{1, 1, 1, 1}));
}

TEST(FoldPadsTest, AddsUnevenPadsToAStridedPoolsOwnCountedPads) {
  PadThen p({0, 0, 2, 0, 0, 0, 1, 3});
  Attributes attributes = pool_attributes({3, 2}, {2, 2});
  attributes.set("pads", std::vector<std::int64_t>{1, 0, 0, 1});
  attributes.set("count_include_pad", std::int64_t{1});
  ValueId y = p.b.op("AveragePool", {p.padded}, {1, 3, 5, 5}, attributes);
  Graph graph = rewritten(p.b.finish({y}), fold_pads, 1);
  EXPECT_EQ(only(graph, "AveragePool").attributes.get_ints("pads"),
            (std::vector<std::int64_t>{3, 0, 1, 4}));
}

TEST(FoldPadsTest, AddsThePadsToAConvsOwn) {
  PadThen p({0, 0, 1, 2, 0, 0, 0, 1});
  Attributes attributes;
  attributes.set("pads", std::vector<std::int64_t>{1, 0, 1, 0});
  ValueId y = p.b.op("Conv", {p.padded, p.b.random({4, 3, 3, 3}), p.b.random({4})}, {1, 4, 8, 8},
                     attributes);
  Graph graph = rewritten(p.b.finish({y}), fold_pads, 1);
  EXPECT_EQ(count_ops(graph, "Pad"), 0);
  EXPECT_EQ(only(graph, "Conv").attributes.get_ints("pads"),
            (std::vector<std::int64_t>{2, 2, 1, 1}));
}

TEST(FoldPadsTest, FoldsTheAttributeFormOfOpset10) {
  Builder b;
  ValueId x = b.input("x", {1, 2, 5, 5});
  Attributes pad_attributes = ints_attribute("pads", {0, 0, 1, 1, 0, 0, 1, 1});
  ValueId padded = b.op("Pad", {x}, {1, 2, 7, 7}, pad_attributes);
  ValueId y = b.op("AveragePool", {padded}, {1, 2, 5, 5}, pool_attributes({3, 3}, {1, 1}));
  Graph original = b.finish({y});
  original.opset = 10;
  Graph graph = rewritten(original, fold_pads, 1);
  EXPECT_EQ(count_ops(graph, "Pad"), 0);
}

TEST(FoldPadsTest, KeepsThePadForItsOtherReaders) {
  PadThen p({0, 0, 1, 1, 0, 0, 1, 1});
  ValueId y = p.b.op("Conv", {p.padded, p.b.random({2, 3, 3, 3})}, {1, 2, 7, 7});
  ValueId z = p.b.same("Relu", {p.padded});
  Graph graph = rewritten(p.b.finish({y, z}), fold_pads, 1);
  EXPECT_EQ(count_ops(graph, "Pad"), 1);
  EXPECT_EQ(graph.value(only(graph, "Conv").inputs[0]).name, "x");
}

TEST(FoldPadsTest, LeavesPadsThatAreNotZeroSpatialPadding) {
  {
    PadThen p({0, 0, 1, 1, 0, 0, 1, 1}, 1.0f);  // a value other than 0
    ValueId y = p.b.op("AveragePool", {p.padded}, {1, 3, 7, 7}, pool_attributes({3, 3}, {1, 1}));
    rewritten(p.b.finish({y}), fold_pads, 0);
  }
  {
    PadThen p({0, 1, 1, 1, 0, 0, 1, 1});  // the channels
    ValueId y = p.b.op("AveragePool", {p.padded}, {1, 4, 7, 7}, pool_attributes({3, 3}, {1, 1}));
    rewritten(p.b.finish({y}), fold_pads, 0);
  }
}

TEST(FoldPadsTest, LeavesPoolsWhosePaddingMeansSomethingElse) {
  {
    // Its own pads left out of the count, the Pad's counted: no one setting.
    PadThen p({0, 0, 1, 1, 0, 0, 1, 1});
    Attributes attributes = pool_attributes({3, 3}, {1, 1});
    attributes.set("pads", std::vector<std::int64_t>{1, 1, 1, 1});
    ValueId y = p.b.op("AveragePool", {p.padded}, {1, 3, 9, 9}, attributes);
    rewritten(p.b.finish({y}), fold_pads, 0);
  }
  {
    // A ceil_mode window may start where the pads would be.
    PadThen p({0, 0, 0, 0, 0, 0, 1, 1});
    Attributes attributes = pool_attributes({2, 2}, {2, 2});
    attributes.set("ceil_mode", std::int64_t{1});
    ValueId y = p.b.op("AveragePool", {p.padded}, {1, 3, 4, 4}, attributes);
    rewritten(p.b.finish({y}), fold_pads, 0);
  }
  {
    PadThen p({0, 0, 1, 1, 0, 0, 1, 1});
    ValueId y = p.b.op("MaxPool", {p.padded}, {1, 3, 7, 7}, pool_attributes({3, 3}, {1, 1}));
    rewritten(p.b.finish({y}), fold_pads, 0);
  }
}

// x[1,C,H,W] -> Conv (3x3 kernel, `dilation`, pads `pads`) -> y.
struct DilatedConv {
  Builder b;
  Graph graph;

  DilatedConv(Shape x_shape, std::int64_t dilation, std::vector<std::int64_t> pads,
              std::int64_t group = 1, std::vector<std::int64_t> strides = {1, 1}) {
    ValueId x = b.input("x", x_shape);
    const std::int64_t out_channels = 4 * group;
    Attributes attributes;
    attributes.set("dilations", std::vector<std::int64_t>{dilation, dilation});
    attributes.set("pads", pads);
    attributes.set("strides", strides);
    attributes.set("group", group);
    attributes.set("kernel_shape", std::vector<std::int64_t>{3, 3});
    const std::int64_t span = 2 * dilation + 1;
    Shape y_shape = {x_shape[0], out_channels,
                     (x_shape[2] + pads[0] + pads[2] - span) / strides[0] + 1,
                     (x_shape[3] + pads[1] + pads[3] - span) / strides[1] + 1};
    ValueId y = b.op(
        "Conv", {x, b.random({out_channels, x_shape[1] / group, 3, 3}), b.random({out_channels})},
        y_shape, attributes);
    graph = b.finish({y});
  }
};

TEST(TrimConvTapsTest, MakesAnAsppConvWhoseOffCentreTapsReadOnlyPaddingOneByOne) {
  // DeepLab v3's ASPP: dilation 24, "same" padding, on a 14x14 map.
  DilatedConv c({1, 6, 14, 14}, 24, {24, 24, 24, 24});
  Graph graph = rewritten(c.graph, trim_conv_taps, 1);
  const Node& conv = only(graph, "Conv");
  EXPECT_EQ(graph.type(conv.inputs[1]).shape, (Shape{4, 6, 1, 1}));
  EXPECT_EQ(conv.attributes.get_ints("kernel_shape"), (std::vector<std::int64_t>{1, 1}));
  EXPECT_EQ(conv.attributes.get_ints("pads"), (std::vector<std::int64_t>{0, 0, 0, 0}));
  EXPECT_EQ(conv.attributes.get_ints("dilations"), (std::vector<std::int64_t>{1, 1}));
  // The weight that was cut is gone.
  EXPECT_EQ(graph.num_values(), 4u);
}

TEST(TrimConvTapsTest, TrimsEachAxisOnItsOwnAndKeepsTapsThatReadSomeInput) {
  // 14 rows (the rows above and below the centre at 12 reach two of them),
  // 5 columns (only the centre column reaches any).
  DilatedConv c({1, 3, 14, 5}, 12, {12, 12, 12, 12});
  Graph graph = rewritten(c.graph, trim_conv_taps, 1);
  const Node& conv = only(graph, "Conv");
  EXPECT_EQ(graph.type(conv.inputs[1]).shape, (Shape{4, 3, 3, 1}));
  EXPECT_EQ(conv.attributes.get_ints("pads"), (std::vector<std::int64_t>{12, 0, 12, 0}));
  EXPECT_EQ(conv.attributes.get_ints("dilations"), (std::vector<std::int64_t>{12, 1}));
}

TEST(TrimConvTapsTest, TrimsUnevenPadsAndStridesAndGroups) {
  // Padded 20 before and 2 after, stride 3, two groups: of the three
  // outputs per axis (rows 0, 3 and 6 of the input), only the last tap
  // reaches the input.
  {
    DilatedConv c({1, 4, 7, 7}, 10, {20, 20, 2, 2}, 2, {3, 3});
    Graph graph = rewritten(c.graph, trim_conv_taps, 1);
    EXPECT_EQ(graph.type(only(graph, "Conv").inputs[1]).shape, (Shape{8, 2, 1, 1}));
    EXPECT_EQ(only(graph, "Conv").attributes.get_ints("pads"),
              (std::vector<std::int64_t>{0, 0, 2, 2}));
  }
  // Only the middle tap reads the input, but cutting the last would take
  // the end pad (4, under the dilation) below zero: it stays.
  DilatedConv c({1, 2, 6, 6}, 8, {8, 8, 4, 4});
  Graph graph = rewritten(c.graph, trim_conv_taps, 1);
  EXPECT_EQ(graph.type(only(graph, "Conv").inputs[1]).shape, (Shape{4, 2, 2, 2}));
  EXPECT_EQ(only(graph, "Conv").attributes.get_ints("pads"),
            (std::vector<std::int64_t>{0, 0, 4, 4}));
}

TEST(TrimConvTapsTest, LeavesConvsWhoseTapsAllReadTheInput) {
  rewritten(DilatedConv({1, 2, 14, 14}, 1, {1, 1, 1, 1}).graph, trim_conv_taps, 0);
  rewritten(DilatedConv({1, 2, 28, 28}, 12, {12, 12, 12, 12}).graph, trim_conv_taps, 0);
  // A weight that is not a constant cannot be cut.
  Builder b;
  ValueId x = b.input("x", {1, 2, 6, 6});
  ValueId w = b.input("w", {4, 2, 3, 3});
  Attributes attributes;
  attributes.set("dilations", std::vector<std::int64_t>{8, 8});
  attributes.set("pads", std::vector<std::int64_t>{8, 8, 8, 8});
  ValueId y = b.op("Conv", {x, w}, {1, 4, 6, 6}, attributes);
  rewritten(b.finish({y}), trim_conv_taps, 0);
}

TEST(CanonicalizeTest, AppliesOnlyTheRewritesOfItsLevel) {
  for (GraphOptLevel level : {GraphOptLevel::kNone, GraphOptLevel::kBasic, GraphOptLevel::kAll}) {
    Graph graph = layer_norm_chain(false, true);
    CanonicalizeStats stats = canonicalize(graph, {.graph_opt = level});
    EXPECT_EQ(count_ops(graph, "LayerNormalization"), level == GraphOptLevel::kAll ? 1 : 0);
    EXPECT_EQ(stats.count("LayerNorm chain -> LayerNormalization"),
              level == GraphOptLevel::kAll ? 1 : 0);
    EXPECT_EQ(stats.ops_before_optimization.at("ReduceMean"), 2);
  }
}

TEST(CanonicalizeTest, ParsesTheLevelNames) {
  EXPECT_EQ(parse_graph_opt_level("basic"), GraphOptLevel::kBasic);
  EXPECT_EQ(to_string(GraphOptLevel::kNone), "none");
  EXPECT_FALSE(parse_graph_opt_level("extended").has_value());
}

}  // namespace
}  // namespace collage
