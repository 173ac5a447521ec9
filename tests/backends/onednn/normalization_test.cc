#include <gtest/gtest.h>

#include "backends/onednn/onednn_test_util.h"

namespace collage::onednn_test {
namespace {

Graph batch_norm_graph(const Shape& shape) {
  GraphBuilder b;
  const Shape c = {shape[1]};
  b.output(
      b.node("BatchNormalization",
             {b.input(shape), b.weights(c), b.weights(c), b.weights(c), b.weights(c, 0.5f, 2.f)},
             shape, attrs({{"epsilon", 1e-3f}})));
  return b.graph();
}

TEST(BatchNormTest, FourDimensionalInputMatchesTheReference) {
  Graph g = batch_norm_graph({2, 13, 5, 6});
  EXPECT_TRUE(onednn_backend().supports(g, g.node(0)));
  EXPECT_TRUE(matches_reference(g));
}

TEST(BatchNormTest, MatrixInputMatchesTheReference) {
  EXPECT_TRUE(matches_reference(batch_norm_graph({4, 9})));
}

TEST(BatchNormTest, RuntimeStatisticsMatchTheReference) {
  GraphBuilder b;
  const Shape c = {6};
  ValueId x = b.input({2, 6, 3, 3});
  ValueId scale = b.input(c);
  ValueId shift = b.input(c);
  ValueId mean = b.input(c);
  ValueId variance = b.input(c);
  b.output(b.node("BatchNormalization", {x, scale, shift, mean, variance}, {2, 6, 3, 3}));
  // Random variances in [0.5, 1.5): keep them positive.
  Graph& g = b.graph();
  const std::vector<Tensor> inputs = {random_tensor({2, 6, 3, 3}, 1), random_tensor(c, 2),
                                      random_tensor(c, 3), random_tensor(c, 4),
                                      random_tensor(c, 5, 0.5f, 1.5f)};
  const std::vector<Tensor> actual = run_onednn(g, inputs);
  ASSERT_EQ(actual.size(), 1u);
  EXPECT_TRUE(all_close(actual[0], run_reference(g, inputs)[0]));
}

TEST(BatchNormTest, TrainingModeIsRejected) {
  Graph g = batch_norm_graph({2, 3, 4, 4});
  g.node(0).attributes.set("training_mode", std::int64_t{1});
  EXPECT_FALSE(onednn_backend().supports(g, g.node(0)));
}

Graph layer_norm_graph(const Shape& shape, std::int64_t axis, bool bias) {
  GraphBuilder b;
  const std::size_t first =
      static_cast<std::size_t>(axis < 0 ? axis + std::int64_t(shape.size()) : axis);
  const Shape normalized(shape.begin() + static_cast<std::ptrdiff_t>(first), shape.end());
  std::vector<ValueId> inputs = {b.input(shape), b.weights(normalized)};
  if (bias) inputs.push_back(b.weights(normalized));
  b.output(b.node("LayerNormalization", inputs, shape, attrs({{"axis", axis}})));
  return b.graph();
}

TEST(LayerNormTest, LastAxisMatchesTheReference) {
  Graph g = layer_norm_graph({2, 7, 32}, -1, true);
  EXPECT_TRUE(onednn_backend().supports(g, g.node(0)));
  EXPECT_TRUE(matches_reference(g));
}

TEST(LayerNormTest, TrailingAxesMatchTheReference) {
  EXPECT_TRUE(matches_reference(layer_norm_graph({3, 4, 5, 6}, 2, true)));
}

TEST(LayerNormTest, MissingBiasMatchesTheReference) {
  EXPECT_TRUE(matches_reference(layer_norm_graph({5, 17}, 1, false)));
}

TEST(LayerNormTest, TheMeanAndInvStdDevOutputsAreRefused) {
  GraphBuilder b;
  ValueId x = b.input({4, 8});
  ValueId y = b.graph().add_value("y", f32({4, 8}));
  ValueId mean = b.graph().add_value("mean", f32({4, 1}));
  ValueId inv_std = b.graph().add_value("inv_std", f32({4, 1}));
  b.graph().add_node("LayerNormalization", {x, b.weights({8})}, {y, mean, inv_std});
  b.output(y);
  b.output(mean);
  b.output(inv_std);
  EXPECT_FALSE(onednn_backend().supports(b.graph(), b.graph().node(0)));
  EXPECT_NE(compile_failure(b.graph()), "");
}

TEST(LayerNormTest, AStashTypeOtherThanFloatIsRefused) {
  GraphBuilder b;
  b.output(b.node("LayerNormalization", {b.input({4, 8}), b.weights({8})}, {4, 8},
                  attrs({{"stash_type", std::int64_t{11}}})));
  EXPECT_FALSE(onednn_backend().supports(b.graph(), b.graph().node(0)));
}

struct SoftmaxCase {
  std::string name;
  std::string op;
  std::int64_t opset;
  Shape shape;
  std::int64_t axis;
};

class SoftmaxTest : public ::testing::TestWithParam<SoftmaxCase> {};

TEST_P(SoftmaxTest, MatchesTheReference) {
  const SoftmaxCase& c = GetParam();
  GraphBuilder b(c.opset);
  b.output(b.node(c.op, {b.input(c.shape)}, c.shape, attrs({{"axis", c.axis}})));
  EXPECT_TRUE(onednn_backend().supports(b.graph(), b.graph().node(0)));
  EXPECT_TRUE(matches_reference(b.graph(), 1, -4.f, 4.f));
}

INSTANTIATE_TEST_SUITE_P(
    Opsets, SoftmaxTest,
    ::testing::Values(SoftmaxCase{"LastAxis", "Softmax", 13, {3, 4, 10}, -1},
                      SoftmaxCase{"MiddleAxis", "Softmax", 13, {3, 4, 10}, 1},
                      SoftmaxCase{"FirstAxis", "Softmax", 13, {3, 4, 10}, 0},
                      SoftmaxCase{"Opset11CoercesTo2D", "Softmax", 11, {3, 4, 10}, 1},
                      SoftmaxCase{"Opset11LastAxis", "Softmax", 11, {3, 4, 10}, 2},
                      SoftmaxCase{"LogLastAxis", "LogSoftmax", 13, {5, 9}, -1},
                      SoftmaxCase{"LogOpset11", "LogSoftmax", 11, {2, 3, 4}, 1}),
    [](const ::testing::TestParamInfo<SoftmaxCase>& info) { return info.param.name; });

}  // namespace
}  // namespace collage::onednn_test
