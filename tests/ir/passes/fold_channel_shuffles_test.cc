// fold_channel_shuffles: a Reshape -> Transpose -> Reshape that shuffles one
// axis becomes a Gather along it, and a Slice of such a Gather along its axis
// a Gather of the indices it keeps.
#include "collage/ir/passes/fold_channel_shuffles.h"

#include <gtest/gtest.h>

#include "ir/passes/passes_test_util.h"

namespace collage {
namespace {

using testing::f32;
using testing::i64_constant;
using testing::ints;
using testing::node_writing;
using testing::perm;

// x [1, 6, 2, 2] -> Reshape [1, groups, 6 / groups, 2, 2] -> Transpose
// `order` -> Reshape [1, 6, 2, 2] = y, an output when `y_out`.
Graph shuffle(std::int64_t groups, std::vector<std::int64_t> order, bool y_out = true) {
  Graph g;
  g.opset = 13;
  ValueId x = g.add_input("x", f32({1, 6, 2, 2}));
  ValueId split_shape = i64_constant(g, "split_shape", {1, groups, 6 / groups, 2, 2});
  ValueId parts = g.add_value("parts", f32({1, groups, 6 / groups, 2, 2}));
  g.add_node("Reshape", {x, split_shape}, {parts});
  Shape swapped = {1, groups, 6 / groups, 2, 2};
  Shape transposed(5);
  for (std::size_t d = 0; d < 5; ++d) transposed[d] = swapped[static_cast<std::size_t>(order[d])];
  ValueId t = g.add_value("t", f32(transposed));
  g.add_node("Transpose", {parts}, {t}, perm(order));
  ValueId merge_shape = i64_constant(g, "merge_shape", {1, 6, 2, 2});
  ValueId y = g.add_value("y", f32({1, 6, 2, 2}));
  g.add_node("Reshape", {t, merge_shape}, {y});
  if (y_out) g.add_output(y);
  return g;
}

TEST(FoldChannelShufflesTest, AShuffleOfTheChannelsBecomesAGather) {
  Graph g = shuffle(2, {0, 2, 1, 3, 4});
  const ChannelShuffleFolds folds = fold_channel_shuffles(g);
  EXPECT_EQ(folds.shuffles, 1);
  ASSERT_EQ(g.num_nodes(), 1u);
  const Node& gather = node_writing(g, "y");
  EXPECT_EQ(gather.op_type, "Gather");
  EXPECT_EQ(g.value(gather.inputs[0]).name, "x");
  EXPECT_EQ(gather.attributes.get_int("axis"), 1);
  // Two groups of three: y's channel m * 2 + i is x's i * 3 + m.
  EXPECT_EQ(ints(*g.value(gather.inputs[1]).constant),
            (std::vector<std::int64_t>{0, 3, 1, 4, 2, 5}));
}

TEST(FoldChannelShufflesTest, ThreeGroupsInterleaveByThrees) {
  Graph g = shuffle(3, {0, 2, 1, 3, 4});
  EXPECT_EQ(fold_channel_shuffles(g).shuffles, 1);
  EXPECT_EQ(ints(*g.value(node_writing(g, "y").inputs[1]).constant),
            (std::vector<std::int64_t>{0, 2, 4, 1, 3, 5}));
}

TEST(FoldChannelShufflesTest, ATransposeOfOtherAxesStays) {
  // Swapping the split channels with the height is no shuffle of one axis.
  Graph g = shuffle(2, {0, 1, 3, 2, 4});
  const ChannelShuffleFolds folds = fold_channel_shuffles(g);
  EXPECT_EQ(folds.shuffles, 0);
  EXPECT_EQ(g.num_nodes(), 3u);
}

TEST(FoldChannelShufflesTest, ATransposeWhosePermIsNoPermutationStays) {
  Graph g = shuffle(2, {0, 1, 2, 3, 4});
  g.node(1).attributes = perm({0, 0, 1, 3, 4});
  EXPECT_EQ(fold_channel_shuffles(g).shuffles, 0);
  EXPECT_EQ(g.num_nodes(), 3u);
}

TEST(FoldChannelShufflesTest, AShuffleWhoseMiddleIsReadElsewhereStays) {
  Graph g = shuffle(2, {0, 2, 1, 3, 4});
  g.add_output(*g.find_value("t"));
  EXPECT_EQ(fold_channel_shuffles(g).shuffles, 0);
  EXPECT_EQ(g.num_nodes(), 3u);
}

// The shuffle, then Slices of y: [0, 3) and [3, 6) of the channels, one
// with its axes given as -3 and a step of one, and one over two axes that
// takes all of the height.
TEST(FoldChannelShufflesTest, SlicesOfTheShuffleBecomeGathersOfTheSource) {
  Graph g = shuffle(2, {0, 2, 1, 3, 4}, /*y_out=*/false);
  const ValueId y = *g.find_value("y");
  ValueId first = g.add_value("first", f32({1, 3, 2, 2}));
  g.add_node("Slice",
             {y, i64_constant(g, "s0", {0}), i64_constant(g, "e0", {3}),
              i64_constant(g, "a0", {-3}), i64_constant(g, "p0", {1})},
             {first});
  ValueId second = g.add_value("second", f32({1, 3, 2, 2}));
  g.add_node("Slice",
             {y, i64_constant(g, "s1", {3, 0}), i64_constant(g, "e1", {100, 2}),
              i64_constant(g, "a1", {1, 2})},
             {second});
  g.add_output(first);
  g.add_output(second);
  const ChannelShuffleFolds folds = fold_channel_shuffles(g);
  EXPECT_EQ(folds.shuffles, 1);
  EXPECT_EQ(folds.slices, 2);
  ASSERT_EQ(g.num_nodes(), 2u);
  for (auto [name, expected] : {std::pair{"first", std::vector<std::int64_t>{0, 3, 1}},
                                std::pair{"second", std::vector<std::int64_t>{4, 2, 5}}}) {
    const Node& gather = node_writing(g, name);
    EXPECT_EQ(gather.op_type, "Gather");
    EXPECT_EQ(g.value(gather.inputs[0]).name, "x");
    EXPECT_EQ(ints(*g.value(gather.inputs[1]).constant), expected) << name;
  }
}

TEST(FoldChannelShufflesTest, ASliceThatAlsoCutsAnotherAxisStays) {
  Graph g = shuffle(2, {0, 2, 1, 3, 4}, /*y_out=*/false);
  const ValueId y = *g.find_value("y");
  ValueId cut = g.add_value("cut", f32({1, 3, 1, 2}));
  g.add_node(
      "Slice",
      {y, i64_constant(g, "s", {0, 1}), i64_constant(g, "e", {3, 2}), i64_constant(g, "a", {1, 2})},
      {cut});
  g.add_output(cut);
  const ChannelShuffleFolds folds = fold_channel_shuffles(g);
  EXPECT_EQ(folds.slices, 0);
  EXPECT_EQ(node_writing(g, "cut").op_type, "Slice");
}

}  // namespace
}  // namespace collage
