// The XNNPACK backend's internals: window resolution, layout planning and
// the NCHW <-> NHWC transposes at a partition's edges.
#include <gtest/gtest.h>

#include "backends/xnnpack/reference_check.h"
#include "collage/backends/xnnpack/channels_last.h"
#include "collage/backends/xnnpack/layout_plan.h"
#include "collage/backends/xnnpack/window_2d.h"

namespace collage::xnnpack {
namespace {

using collage::testing::attrs;
using collage::testing::GraphMaker;
using collage::testing::Ints;

Node window_node(Attributes attributes) {
  Node node;
  node.op_type = "MaxPool";
  node.attributes = std::move(attributes);
  return node;
}

TEST(Window2dTest, SameUpperPutsTheOddPaddingAtTheEnd) {
  Node node =
      window_node(attrs({{"auto_pad", std::string("SAME_UPPER")}, {"strides", Ints{2, 2}}}));
  auto window = resolve_window(node, {1, 1, 10, 10}, {1, 1, 5, 5}, 3, 3, false);
  ASSERT_TRUE(window.has_value());
  EXPECT_EQ(window->pad_top, 0);
  EXPECT_EQ(window->pad_bottom, 1);
}

TEST(Window2dTest, SameLowerPutsTheOddPaddingAtTheStart) {
  Node node =
      window_node(attrs({{"auto_pad", std::string("SAME_LOWER")}, {"strides", Ints{2, 2}}}));
  auto window = resolve_window(node, {1, 1, 10, 10}, {1, 1, 5, 5}, 3, 3, false);
  ASSERT_TRUE(window.has_value());
  EXPECT_EQ(window->pad_left, 1);
  EXPECT_EQ(window->pad_right, 0);
}

TEST(Window2dTest, CeilModeRowBecomesExtraEndPadding) {
  Node node = window_node(attrs({{"strides", Ints{2, 2}}}));
  auto window = resolve_window(node, {1, 1, 6, 6}, {1, 1, 3, 2}, 3, 3, true);
  ASSERT_TRUE(window.has_value());
  EXPECT_EQ(window->pad_bottom, 1);
  EXPECT_EQ(window->ceil_extra_bottom, 1);
  EXPECT_EQ(window->pad_right, 0);
}

TEST(Window2dTest, OutputShapeTheWindowDoesNotGiveIsRejected) {
  Node node = window_node(attrs({{"strides", Ints{2, 2}}}));
  EXPECT_FALSE(resolve_window(node, {1, 1, 6, 6}, {1, 1, 3, 3}, 3, 3, false).has_value());
  EXPECT_FALSE(resolve_window(node, {1, 1, 6, 6}, {1, 1, 4, 2}, 3, 3, true).has_value());
}

TEST(LayoutPlanTest, ValuesBetweenConvolutionsAreChannelsLast) {
  GraphMaker g;
  ValueId x = g.input({1, 3, 5, 5});
  ValueId conv = g.node("Conv", {x, g.weights({4, 3, 1, 1})}, {1, 4, 5, 5});
  ValueId relu = g.node("Relu", {conv}, {1, 4, 5, 5});
  Graph graph = g.finish(relu);
  auto plan = LayoutPlan::make(graph);
  ASSERT_TRUE(plan.ok()) << plan.error();
  EXPECT_EQ(plan->layout(x), Layout::kChannelsLast);
  EXPECT_EQ(plan->layout(relu), Layout::kChannelsLast);
}

TEST(LayoutPlanTest, ElementwiseOnlyPartitionsStayInNchwOrder) {
  GraphMaker g;
  ValueId x = g.input({2, 3, 4, 5});
  ValueId y = g.node("Sigmoid", {x}, {2, 3, 4, 5});
  Graph graph = g.finish(y);
  auto plan = LayoutPlan::make(graph);
  ASSERT_TRUE(plan.ok()) << plan.error();
  EXPECT_EQ(plan->layout(x), Layout::kPlain);
  EXPECT_EQ(plan->layout(y), Layout::kPlain);
}

TEST(LayoutPlanTest, ValueNeededInBothLayoutsIsAFailure) {
  GraphMaker g;
  ValueId x = g.input({1, 3, 5, 5});
  ValueId conv = g.node("Conv", {x, g.weights({4, 3, 1, 1})}, {1, 4, 5, 5});
  Graph graph = g.finish(g.node("Flatten", {conv}, {1, 100}));
  EXPECT_FALSE(LayoutPlan::make(graph).ok());
}

TEST(ChannelsLastTest, ShapesWithOneChannelOrOnePixelAreLayoutFree) {
  EXPECT_TRUE(is_layout_free({2, 1, 5, 5}));
  EXPECT_TRUE(is_layout_free({2, 7, 1, 1}));
  EXPECT_TRUE(is_layout_free({2, 7, 5}));
  EXPECT_FALSE(is_layout_free({1, 2, 1, 3}));
}

TEST(ChannelsLastTest, TransposesRoundTripOnAPoolForLargeOddShapes) {
  const std::int64_t n = 2, c = 37, hw = 61 * 33;
  Tensor source = collage::testing::random_tensor({n, c, hw}, 9);
  std::vector<float> nhwc(static_cast<std::size_t>(n * c * hw));
  std::vector<float> back(nhwc.size());
  pthreadpool_t pool = pthreadpool_create(2);
  nchw_to_nhwc(source.data<float>(), nhwc.data(), n, c, hw, pool);
  nhwc_to_nchw(nhwc.data(), back.data(), n, c, hw, pool);
  pthreadpool_destroy(pool);
  const float* s = source.data<float>();
  EXPECT_EQ(nhwc[(1 * hw + 5) * c + 3], s[(1 * c + 3) * hw + 5]);
  EXPECT_TRUE(std::equal(back.begin(), back.end(), s));
}

}  // namespace
}  // namespace collage::xnnpack
