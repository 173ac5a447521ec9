// cancel_transposes: a Transpose of a Transpose becomes one Transpose by the
// composed permutation, or nothing when the two cancel.
#include "collage/ir/passes/cancel_transposes.h"

#include <gtest/gtest.h>

#include "ir/passes/passes_test_util.h"

namespace collage {
namespace {

using testing::f32;
using testing::node_writing;
using testing::perm;

TEST(CancelTransposesTest, TwoTransposesBecomeOneByTheComposedPermutation) {
  Graph g;
  ValueId x = g.add_input("x", f32({2, 3, 4}));
  ValueId t1 = g.add_value("t1", f32({3, 2, 4}));
  ValueId t2 = g.add_value("t2", f32({4, 3, 2}));
  g.add_node("Transpose", {x}, {t1}, perm({1, 0, 2}));
  g.add_node("Transpose", {t1}, {t2}, perm({2, 0, 1}));
  g.add_output(t2);
  EXPECT_EQ(cancel_transposes(g), 1);
  ASSERT_EQ(g.num_nodes(), 1u);
  const Node& transpose = node_writing(g, "t2");
  EXPECT_EQ(g.value(transpose.inputs[0]).name, "x");
  // t2[i, j, k] = t1[j, k, i] = x[k, j, i]
  EXPECT_EQ(transpose.attributes.get_ints("perm"), (std::vector<std::int64_t>{2, 1, 0}));
}

TEST(CancelTransposesTest, TransposesThatCancelLeaveTheirReaderReadingTheFirstInput) {
  Graph g;
  ValueId x = g.add_input("x", f32({2, 3}));
  ValueId t1 = g.add_value("t1", f32({3, 2}));
  ValueId t2 = g.add_value("t2", f32({2, 3}));
  ValueId y = g.add_value("y", f32({2, 3}));
  g.add_node("Transpose", {x}, {t1});
  g.add_node("Transpose", {t1}, {t2});
  g.add_node("Relu", {t2}, {y});
  g.add_output(y);
  EXPECT_EQ(cancel_transposes(g), 2);
  ASSERT_EQ(g.num_nodes(), 1u);
  EXPECT_EQ(g.value(node_writing(g, "y").inputs[0]).name, "x");
}

TEST(CancelTransposesTest, ATransposeOfAnotherOpStays) {
  Graph g;
  ValueId x = g.add_input("x", f32({2, 3}));
  ValueId r = g.add_value("r", f32({2, 3}));
  ValueId t = g.add_value("t", f32({3, 2}));
  g.add_node("Relu", {x}, {r});
  g.add_node("Transpose", {r}, {t}, perm({1, 0}));
  g.add_output(t);
  EXPECT_EQ(cancel_transposes(g), 0);
  EXPECT_EQ(g.num_nodes(), 2u);
}

}  // namespace
}  // namespace collage
