// fold_channel_affine: a per-channel scale, shift or inference
// BatchNormalization after a Conv is folded into the Conv's weights and bias.
#include "collage/ir/passes/fold_channel_affine.h"

#include <gtest/gtest.h>

#include "ir/passes/passes_test_util.h"

namespace collage {
namespace {

using testing::f32;
using testing::f32_constant;
using testing::floats;
using testing::node_writing;

// x[1,1,2,2] -> 1x1 Conv with `weights` (one per output channel) and `bias`
// -> c[1,C,2,2]. Returns c.
ValueId conv(Graph& g, const std::vector<float>& weights, const std::vector<float>& bias) {
  const auto channels = static_cast<std::int64_t>(weights.size());
  ValueId x = g.add_input("x", f32({1, 1, 2, 2}));
  ValueId w = f32_constant(g, "w", weights, {channels, 1, 1, 1});
  ValueId b = f32_constant(g, "b", bias, {channels});
  ValueId c = g.add_value("c", f32({1, channels, 2, 2}));
  g.add_node("Conv", {x, w, b}, {c});
  return c;
}

// The constant the Conv writing `output` reads as input `i`.
std::vector<float> conv_input(const Graph& g, const std::string& output, std::size_t i) {
  return floats(*g.value(node_writing(g, output).inputs[i]).constant);
}

TEST(FoldChannelAffineTest, AScaleAfterAConvMultipliesItsWeightsAndBiasPerChannel) {
  Graph g;
  ValueId c = conv(g, {1, 2}, {0.5f, 1});
  ValueId y = g.add_value("y", f32({1, 2, 2, 2}));
  g.add_node("Mul", {c, f32_constant(g, "s", {3, 4}, {2, 1, 1})}, {y});
  g.add_output(y);
  ChannelAffineFolds folds = fold_channel_affine(g);
  EXPECT_EQ(folds.scales, 1);
  EXPECT_EQ(folds.total(), 1);
  ASSERT_EQ(g.num_nodes(), 1u);
  EXPECT_EQ(node_writing(g, "y").op_type, "Conv");
  EXPECT_EQ(conv_input(g, "y", 1), (std::vector<float>{3, 8}));
  EXPECT_EQ(conv_input(g, "y", 2), (std::vector<float>{1.5f, 4}));
}

TEST(FoldChannelAffineTest, ABatchNormFoldsItsScaleAndShiftIntoTheConv) {
  Graph g;
  ValueId c = conv(g, {1}, {0.5f});
  ValueId y = g.add_value("y", f32({1, 1, 2, 2}));
  Attributes epsilon;
  epsilon.set("epsilon", 0.5f);
  // scale = 4 / sqrt(3.5 + 0.5) = 2, shift = 3 - 0.5 * 2 = 2
  g.add_node("BatchNormalization",
             {c, f32_constant(g, "gamma", {4}, {1}), f32_constant(g, "beta", {3}, {1}),
              f32_constant(g, "mean", {0.5f}, {1}), f32_constant(g, "var", {3.5f}, {1})},
             {y}, epsilon);
  g.add_output(y);
  EXPECT_EQ(fold_channel_affine(g).batch_norms, 1);
  ASSERT_EQ(g.num_nodes(), 1u);
  EXPECT_EQ(conv_input(g, "y", 1), (std::vector<float>{2}));
  EXPECT_EQ(conv_input(g, "y", 2), (std::vector<float>{3}));
}

TEST(FoldChannelAffineTest, ABatchNormInTrainingModeStays) {
  Graph g;
  ValueId c = conv(g, {1}, {0.5f});
  ValueId y = g.add_value("y", f32({1, 1, 2, 2}));
  Attributes training;
  training.set("training_mode", std::int64_t{1});
  g.add_node("BatchNormalization",
             {c, f32_constant(g, "gamma", {4}, {1}), f32_constant(g, "beta", {3}, {1}),
              f32_constant(g, "mean", {0.5f}, {1}), f32_constant(g, "var", {3.5f}, {1})},
             {y}, training);
  g.add_output(y);
  EXPECT_EQ(fold_channel_affine(g).total(), 0);
  EXPECT_EQ(g.num_nodes(), 2u);
  EXPECT_EQ(conv_input(g, "c", 1), (std::vector<float>{1}));
}

TEST(FoldChannelAffineTest, AShiftAfterAnOpWithoutWeightsStays) {
  Graph g;
  ValueId x = g.add_input("x", f32({1, 2, 2, 2}));
  ValueId r = g.add_value("r", f32({1, 2, 2, 2}));
  ValueId y = g.add_value("y", f32({1, 2, 2, 2}));
  g.add_node("Relu", {x}, {r});
  g.add_node("Add", {r, f32_constant(g, "t", {1, 2}, {2, 1, 1})}, {y});
  g.add_output(y);
  EXPECT_EQ(fold_channel_affine(g).total(), 0);
  EXPECT_EQ(g.num_nodes(), 2u);
}

}  // namespace
}  // namespace collage
