// fold_batch_norm: the folded graph computes what the original computed,
// checked by running both with the reference executor.
#include "collage/ir/passes/fold_batch_norm.h"

#include <gtest/gtest.h>

#include <random>

#include "collage/backends/native/native_backend.h"
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
      ASSERT_NEAR(actual[i].data<float>()[j], expected[i].data<float>()[j], 1e-4) << "at " << j;
    }
  }
}

int count_ops(const Graph& graph, const std::string& op) {
  int n = 0;
  for (const Node& node : graph.nodes()) n += node.op_type == op ? 1 : 0;
  return n;
}

TEST(FoldBatchNormTest, FoldsIntoAConvWithBiasAndKeepsItsOutputs) {
  Graph original = conv_bn_relu("Conv", 1, true);
  Graph folded = original;
  EXPECT_EQ(fold_batch_norm(folded), 1);
  EXPECT_EQ(count_ops(folded, "BatchNormalization"), 0);
  expect_same_outputs(original, folded);
}

TEST(FoldBatchNormTest, GivesABiasToAConvWithoutOne) {
  Graph original = conv_bn_relu("Conv", 1, false);
  Graph folded = original;
  EXPECT_EQ(fold_batch_norm(folded), 1);
  expect_same_outputs(original, folded);
}

TEST(FoldBatchNormTest, FoldsIntoAGroupedConv) {
  Graph original = conv_bn_relu("Conv", 2, true);
  Graph folded = original;
  EXPECT_EQ(fold_batch_norm(folded), 1);
  expect_same_outputs(original, folded);
}

TEST(FoldBatchNormTest, FoldsIntoAConvTransposeAlongItsOutputChannels) {
  Graph original = conv_bn_relu("ConvTranspose", 1, true);
  Graph folded = original;
  EXPECT_EQ(fold_batch_norm(folded), 1);
  expect_same_outputs(original, folded);
}

TEST(FoldBatchNormTest, KeepsTheNormalizedValueAGraphOutputUnderItsName) {
  Graph original = conv_bn_relu("Conv", 1, true, true);
  Graph folded = original;
  EXPECT_EQ(fold_batch_norm(folded), 1);
  expect_same_outputs(original, folded);
}

TEST(FoldBatchNormTest, LeavesABatchNormWhoseInputIsAlsoReadElsewhere) {
  Graph graph = conv_bn_relu("Conv", 1, true);
  // The convolution's output is also a graph output: folding would change it.
  graph.add_output(*graph.find_value("conv"));
  EXPECT_EQ(fold_batch_norm(graph), 0);
  EXPECT_EQ(count_ops(graph, "BatchNormalization"), 1);
}

}  // namespace
}  // namespace collage
