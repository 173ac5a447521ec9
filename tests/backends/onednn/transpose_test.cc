// Transpose: a view of its input in the permuted order. What reads it gets
// what the reference executor's Transpose computes, in every layout the
// input arrives in, and a convolution that computes channels-last reads a
// transposed channels-last image without a reorder.
#include "collage/backends/onednn/transpose.h"

#include <gtest/gtest.h>

#include "backends/onednn/onednn_test_util.h"

namespace collage::onednn_test {
namespace {

using testing::expect_edge_layouts_match_reference;

using Ints = std::vector<std::int64_t>;

// x[1,9,7,3] (channels-last) -> Transpose to NCHW -> Conv 3x3 (3 -> 16) ->
// Relu -> Transpose back to NHWC: how a TensorFlow model reaches its first
// convolution and leaves its last.
Graph channels_last_conv() {
  GraphBuilder g;
  ValueId x = g.input({1, 9, 7, 3});
  ValueId nchw = g.node("Transpose", {x}, {1, 3, 9, 7}, attrs({{"perm", Ints{0, 3, 1, 2}}}));
  ValueId conv = g.node("Conv", {nchw, g.weights({16, 3, 3, 3}), g.weights({16})}, {1, 16, 9, 7},
                        attrs({{"pads", Ints{1, 1, 1, 1}}}));
  ValueId relu = g.node("Relu", {conv}, {1, 16, 9, 7});
  return g.finish(g.node("Transpose", {relu}, {1, 9, 7, 16}, attrs({{"perm", Ints{0, 2, 3, 1}}})));
}

TEST(OnednnTransposeTest, AChannelsLastImageThroughAConvolutionMatchesTheReference) {
  EXPECT_TRUE(matches_reference(channels_last_conv()));
  EXPECT_TRUE(matches_reference(channels_last_conv(), 2));
}

TEST(OnednnTransposeTest, ATransposeAloneAndTheDefaultPermMatchTheReference) {
  {
    GraphBuilder g;
    ValueId x = g.input({2, 3, 5});
    EXPECT_TRUE(matches_reference(
        g.finish(g.node("Transpose", {x}, {3, 2, 5}, attrs({{"perm", Ints{1, 0, 2}}})))));
  }
  {
    // No perm: the axes reversed.
    GraphBuilder g;
    ValueId x = g.input({2, 3, 4, 5});
    EXPECT_TRUE(matches_reference(g.finish(g.node("Transpose", {x}, {5, 4, 3, 2}))));
  }
}

TEST(OnednnTransposeTest, OpsAfterATransposeReadItInItsOrder) {
  // An Add with a per-channel operand, a MatMul over the last axis and a
  // Relu, each reading a transposed value.
  GraphBuilder g;
  ValueId x = g.input({1, 6, 5, 4});
  ValueId t = g.node("Transpose", {x}, {1, 4, 6, 5}, attrs({{"perm", Ints{0, 3, 1, 2}}}));
  ValueId add = g.node("Add", {t, g.weights({1, 4, 1, 1})}, {1, 4, 6, 5});
  ValueId relu = g.node("Relu", {t}, {1, 4, 6, 5});
  g.output(add);
  g.output(relu);
  Graph graph = g.finish(g.node("MatMul", {t, g.weights({5, 3})}, {1, 4, 6, 3}));
  EXPECT_TRUE(matches_reference(graph));
}

TEST(OnednnTransposeTest, EveryEdgeLayoutMatches) {
  const std::vector<EdgeLayout> layouts = {EdgeLayout::kPlain, EdgeLayout::kChannelsLast,
                                           EdgeLayout::kBlocked8, EdgeLayout::kBlocked16};
  // A 16-channel NCHW input, transposed to NHWC and back through a
  // convolution, so that both edges are images.
  GraphBuilder g;
  ValueId x = g.input({1, 16, 5, 6});
  ValueId nhwc = g.node("Transpose", {x}, {1, 5, 6, 16}, attrs({{"perm", Ints{0, 2, 3, 1}}}));
  ValueId back = g.node("Transpose", {nhwc}, {1, 16, 5, 6}, attrs({{"perm", Ints{0, 3, 1, 2}}}));
  Graph graph = g.finish(g.node("Conv", {back, g.weights({16, 16, 1, 1})}, {1, 16, 5, 6}));
  for (EdgeLayout in : layouts) {
    for (EdgeLayout out : layouts) {
      expect_edge_layouts_match_reference(onednn_backend(), graph, in, out, 1);
    }
  }
}

TEST(OnednnTransposeTest, AConvolutionComputingChannelsLastReadsTheTransposedImageAsItIs) {
  const std::vector<onednn::Step> steps = lowered_steps(channels_last_conv());
  ASSERT_FALSE(steps.empty());
  int reorders = 0;
  for (const onednn::Step& step : steps) reorders += step.is_reorder;
  const onednn::Step& first = steps.front();
  if (first.is_reorder) {
    // oneDNN computes this convolution in a blocked layout here: one
    // reorder in, and one out of the blocked output.
    EXPECT_LE(reorders, 2);
    GTEST_SKIP() << "oneDNN's convolution does not compute channels-last on this CPU";
  }
  // The image is read where it lies; the only copy left is the output's,
  // from the convolution's buffer into the caller's tensor.
  EXPECT_LE(reorders, 1);
}

TEST(OnednnTransposeTest, WhatATransposeCannotBeIsRefused) {
  GraphBuilder g;
  ValueId x = g.input({2, 3});
  Graph bad_perm = g.finish(g.node("Transpose", {x}, {3, 2}, attrs({{"perm", Ints{0, 0}}})));
  const Node& node = bad_perm.node(0);
  EXPECT_FALSE(onednn::transpose_spec(bad_perm, node).ok());
  EXPECT_FALSE(onednn_backend().supports(bad_perm, node));
}

}  // namespace
}  // namespace collage::onednn_test
