#include <gtest/gtest.h>

#include <limits>
#include <numeric>

#include "tensor_op_harness.h"

namespace collage::native_test {
namespace {

std::vector<float> iota(std::size_t n) {
  std::vector<float> values(n);
  std::iota(values.begin(), values.end(), 0.0f);
  return values;
}

constexpr std::int64_t kMaxInt = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kMinInt = std::numeric_limits<std::int64_t>::min();

TEST(TensorIndexTest, TransposeWithoutPermReversesAxes) {
  const Tensor out =
      run_one({"Transpose", {{f32({2, 3}, iota(6))}}, {type(DType::kFloat32, {3, 2})}});
  EXPECT_EQ(values<float>(out), (std::vector<float>{0, 3, 1, 4, 2, 5}));
}

TEST(TensorIndexTest, TransposeFollowsPerm) {
  Attributes perm;
  perm.set("perm", std::vector<std::int64_t>{1, 2, 0});
  // in[i,j,k] (shape [2,2,3]) goes to out[j,k,i] (shape [2,3,2]).
  const Tensor out = run_one(
      {"Transpose", {{f32({2, 2, 3}, iota(12))}}, {type(DType::kFloat32, {2, 3, 2})}, perm});
  EXPECT_EQ(values<float>(out), (std::vector<float>{0, 6, 1, 7, 2, 8, 3, 9, 4, 10, 5, 11}));
}

TEST(TensorIndexTest, ConcatJoinsInt64AlongANegativeAxis) {
  Attributes axis;
  axis.set("axis", std::int64_t{-1});
  const Tensor out = run_one({"Concat",
                              {{i64({2, 1}, {1, 2})}, {i64({2, 2}, {10, 11, 20, 21})}},
                              {type(DType::kInt64, {2, 3})},
                              axis});
  EXPECT_EQ(values<std::int64_t>(out), (std::vector<std::int64_t>{1, 10, 11, 2, 20, 21}));
}

TEST(TensorIndexTest, ConcatOfShapePiecesBuildsAShapeVector) {
  Attributes axis;
  axis.set("axis", std::int64_t{0});
  const Tensor out = run_one({"Concat",
                              {{i64({1}, {2})}, {i64({1}, {-1})}, {i64({2}, {4, 8})}},
                              {type(DType::kInt64, {4})},
                              axis});
  EXPECT_EQ(values<std::int64_t>(out), (std::vector<std::int64_t>{2, -1, 4, 8}));
}

TEST(TensorIndexTest, SplitBeforeOpset13ReadsTheSplitAttribute) {
  Attributes split;
  split.set("axis", std::int64_t{1});
  split.set("split", std::vector<std::int64_t>{1, 2});
  const std::vector<Tensor> out =
      run_op({"Split",
              {{f32({2, 3}, iota(6))}},
              {type(DType::kFloat32, {2, 1}), type(DType::kFloat32, {2, 2})},
              split,
              11});
  EXPECT_EQ(values<float>(out[0]), (std::vector<float>{0, 3}));
  EXPECT_EQ(values<float>(out[1]), (std::vector<float>{1, 2, 4, 5}));
}

TEST(TensorIndexTest, SplitFromOpset13ReadsTheSplitInput) {
  const std::vector<Tensor> out =
      run_op({"Split",
              {{f32({5}, iota(5))}, {i64({2}, {3, 2})}},
              {type(DType::kFloat32, {3}), type(DType::kFloat32, {2})}});
  EXPECT_EQ(values<float>(out[0]), (std::vector<float>{0, 1, 2}));
  EXPECT_EQ(values<float>(out[1]), (std::vector<float>{3, 4}));
}

TEST(TensorIndexTest, SplitWithoutSizesCutsEqualPieces) {
  const std::vector<Tensor> out = run_op(
      {"Split",
       {{f32({6}, iota(6))}},
       {type(DType::kFloat32, {2}), type(DType::kFloat32, {2}), type(DType::kFloat32, {2})}});
  EXPECT_EQ(values<float>(out[2]), (std::vector<float>{4, 5}));
}

TEST(TensorIndexTest, SplitSizesThatDisagreeWithTheOutputsThrow) {
  EXPECT_THROW(run_op({"Split",
                       {{f32({5}, iota(5))}, {i64({2}, {2, 3})}},
                       {type(DType::kFloat32, {3}), type(DType::kFloat32, {2})}}),
               Error);
}

TEST(TensorIndexTest, SliceBeforeOpset10ReadsAttributes) {
  Attributes slice;
  slice.set("starts", std::vector<std::int64_t>{1});
  slice.set("ends", std::vector<std::int64_t>{3});
  slice.set("axes", std::vector<std::int64_t>{1});
  const Tensor out =
      run_one({"Slice", {{f32({2, 4}, iota(8))}}, {type(DType::kFloat32, {2, 2})}, slice, 9});
  EXPECT_EQ(values<float>(out), (std::vector<float>{1, 2, 5, 6}));
}

TEST(TensorIndexTest, SliceClampsEndsBeyondTheAxis) {
  const Tensor out = run_one({"Slice",
                              {{f32({5}, iota(5))}, {i64({1}, {-2})}, {i64({1}, {kMaxInt})}},
                              {type(DType::kFloat32, {2})}});
  EXPECT_EQ(values<float>(out), (std::vector<float>{3, 4}));
}

TEST(TensorIndexTest, SliceWithNegativeStepReversesTheAxis) {
  const Tensor out = run_one({"Slice",
                              {{f32({5}, iota(5))},
                               {i64({1}, {-1})},
                               {i64({1}, {kMinInt})},
                               {i64({1}, {0})},
                               {i64({1}, {-1})}},
                              {type(DType::kFloat32, {5})}});
  EXPECT_EQ(values<float>(out), (std::vector<float>{4, 3, 2, 1, 0}));
}

TEST(TensorIndexTest, SliceWithNegativeStepOfTwoStopsBeforeTheEnd) {
  // starts past the end clamp to dim-1 when stepping backwards.
  const Tensor out = run_one(
      {"Slice",
       {{f32({7}, iota(7))}, {i64({1}, {100})}, {i64({1}, {1})}, {i64({1}, {0})}, {i64({1}, {-2})}},
       {type(DType::kFloat32, {3})}});
  EXPECT_EQ(values<float>(out), (std::vector<float>{6, 4, 2}));
}

TEST(TensorIndexTest, SliceSelectsStepsOnANegativeAxisOfInt64Data) {
  const Tensor out = run_one({"Slice",
                              {{i64({2, 5}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9})},
                               {i64({1}, {0})},
                               {i64({1}, {5})},
                               {i64({1}, {-1})},
                               {i64({1}, {2})}},
                              {type(DType::kInt64, {2, 3})}});
  EXPECT_EQ(values<std::int64_t>(out), (std::vector<std::int64_t>{0, 2, 4, 5, 7, 9}));
}

TEST(TensorIndexTest, SliceWithInt32StartsAndEnds) {
  const Tensor out = run_one({"Slice",
                              {{f32({4}, iota(4))}, {i32({1}, {1})}, {i32({1}, {-1})}},
                              {type(DType::kFloat32, {2})}});
  EXPECT_EQ(values<float>(out), (std::vector<float>{1, 2}));
}

TEST(TensorIndexTest, GatherWrapsNegativeIndices) {
  const Tensor out = run_one(
      {"Gather", {{f32({3, 2}, iota(6))}, {i64({2}, {-1, 0})}}, {type(DType::kFloat32, {2, 2})}});
  EXPECT_EQ(values<float>(out), (std::vector<float>{4, 5, 0, 1}));
}

TEST(TensorIndexTest, GatherAlongAxisOneWithMatrixIndices) {
  Attributes axis;
  axis.set("axis", std::int64_t{1});
  const Tensor out = run_one({"Gather",
                              {{f32({2, 3}, iota(6))}, {i32({2, 2}, {2, 0, 1, 1})}},
                              {type(DType::kFloat32, {2, 2, 2})},
                              axis});
  EXPECT_EQ(values<float>(out), (std::vector<float>{2, 0, 1, 1, 5, 3, 4, 4}));
}

TEST(TensorIndexTest, GatherOfAScalarIndexFromAShapeGivesAScalar) {
  const Tensor out = run_one(
      {"Gather", {{i64({4}, {1, 3, 224, 224})}, {i64({}, {1})}}, {type(DType::kInt64, {})}});
  EXPECT_EQ(values<std::int64_t>(out), (std::vector<std::int64_t>{3}));
}

TEST(TensorIndexTest, GatherIndexOutOfRangeThrows) {
  EXPECT_THROW(
      run_one({"Gather", {{f32({3}, iota(3))}, {i64({1}, {3})}}, {type(DType::kFloat32, {1})}}),
      Error);
}

TEST(TensorIndexTest, GatherElementsPicksAlongTheAxis) {
  Attributes axis;
  axis.set("axis", std::int64_t{1});
  const Tensor out = run_one({"GatherElements",
                              {{f32({2, 2}, {1, 2, 3, 4})}, {i64({2, 2}, {0, 0, 1, -2})}},
                              {type(DType::kFloat32, {2, 2})},
                              axis});
  EXPECT_EQ(values<float>(out), (std::vector<float>{1, 1, 4, 3}));
}

TEST(TensorIndexTest, PadConstantFromOpset11UsesTheValueInput) {
  const Tensor out =
      run_one({"Pad",
               {{f32({2, 2}, {1, 2, 3, 4})}, {i64({4}, {0, 1, 1, 0})}, {f32({}, {9})}},
               {type(DType::kFloat32, {3, 3})}});
  EXPECT_EQ(values<float>(out), (std::vector<float>{9, 1, 2, 9, 3, 4, 9, 9, 9}));
}

TEST(TensorIndexTest, PadReflectMirrorsWithoutTheEdge) {
  Attributes mode;
  mode.set("mode", std::string("reflect"));
  const Tensor out = run_one(
      {"Pad", {{f32({3}, {1, 2, 3})}, {i64({2}, {2, 2})}}, {type(DType::kFloat32, {7})}, mode});
  EXPECT_EQ(values<float>(out), (std::vector<float>{3, 2, 1, 2, 3, 2, 1}));
}

TEST(TensorIndexTest, PadEdgeRepeatsTheBorder) {
  Attributes mode;
  mode.set("mode", std::string("edge"));
  const Tensor out = run_one({"Pad",
                              {{f32({2, 2}, {1, 2, 3, 4})}, {i64({4}, {1, 0, 0, 1})}},
                              {type(DType::kFloat32, {3, 3})},
                              mode});
  EXPECT_EQ(values<float>(out), (std::vector<float>{1, 2, 2, 1, 2, 2, 3, 4, 4}));
}

TEST(TensorIndexTest, PadBeforeOpset11ReadsPadsAndValueAttributes) {
  Attributes pads;
  pads.set("pads", std::vector<std::int64_t>{1, 0});
  pads.set("value", 7.0f);
  const Tensor out = run_one({"Pad", {{f32({2}, {1, 2})}}, {type(DType::kFloat32, {3})}, pads, 2});
  EXPECT_EQ(values<float>(out), (std::vector<float>{7, 1, 2}));
}

TEST(TensorIndexTest, PadWithNegativePadsCrops) {
  const Tensor out =
      run_one({"Pad", {{i64({4}, {1, 2, 3, 4})}, {i64({2}, {-1, 1})}}, {type(DType::kInt64, {4})}});
  EXPECT_EQ(values<std::int64_t>(out), (std::vector<std::int64_t>{2, 3, 4, 0}));
}

TEST(TensorIndexTest, PadWrapModeIsNotSupported) {
  Attributes mode;
  mode.set("mode", std::string("wrap"));
  EXPECT_FALSE(op_supported(
      {"Pad", {{f32({2}, {1, 2})}, {i64({2}, {1, 1})}}, {type(DType::kFloat32, {4})}, mode, 19}));
}

TEST(TensorIndexTest, ExpandBroadcastsToTheShapeInput) {
  const Tensor out = run_one({"Expand",
                              {{f32({3, 1}, {1, 2, 3})}, {i64({3}, {2, 1, 2})}},
                              {type(DType::kFloat32, {2, 3, 2})}});
  EXPECT_EQ(values<float>(out), (std::vector<float>{1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3}));
}

TEST(TensorIndexTest, ExpandKeepsLargerInputDimensions) {
  // A shape entry of 1 keeps the input's dimension, as numpy broadcasting does.
  const Tensor out = run_one(
      {"Expand", {{f32({2, 1}, {1, 2})}, {i64({2}, {1, 3})}}, {type(DType::kFloat32, {2, 3})}});
  EXPECT_EQ(values<float>(out), (std::vector<float>{1, 1, 1, 2, 2, 2}));
}

TEST(TensorIndexTest, TileRepeatsEachAxis) {
  const Tensor out = run_one(
      {"Tile", {{f32({2, 2}, {1, 2, 3, 4})}, {i64({2}, {2, 3})}}, {type(DType::kFloat32, {4, 6})}});
  EXPECT_EQ(values<float>(out), (std::vector<float>{1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4,
                                                    1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4}));
}

TEST(TensorIndexTest, CumSumAddsAlongTheAxis) {
  const Tensor out = run_one({"CumSum",
                              {{f32({2, 3}, {1, 2, 3, 4, 5, 6})}, {i64({}, {1})}},
                              {type(DType::kFloat32, {2, 3})}});
  EXPECT_EQ(values<float>(out), (std::vector<float>{1, 3, 6, 4, 9, 15}));
}

TEST(TensorIndexTest, CumSumExclusiveAndReverse) {
  Attributes flags;
  flags.set("exclusive", std::int64_t{1});
  flags.set("reverse", std::int64_t{1});
  const Tensor out = run_one(
      {"CumSum", {{i64({4}, {1, 2, 3, 4})}, {i32({}, {0})}}, {type(DType::kInt64, {4})}, flags});
  EXPECT_EQ(values<std::int64_t>(out), (std::vector<std::int64_t>{9, 7, 4, 0}));
}

}  // namespace
}  // namespace collage::native_test
