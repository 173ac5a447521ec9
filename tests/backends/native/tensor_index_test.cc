#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <numeric>
#include <optional>
#include <string>

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

// Every permutation of shapes up to rank 4 whose axes (sizes 1, 3, 16, 17
// and 40 among them) make the tiled 2-D turns meet partial and full tiles,
// for elements of 1, 2, 4 and 8 bytes, against out[i] = in[perm applied].
template <typename T>
void check_transposes_of(DType dtype) {
  const std::vector<Shape> shapes = {{5},           {17, 40},       {16, 16},      {1, 33, 9},
                                     {3, 1, 19, 8}, {2, 17, 3, 24}, {40, 1, 1, 3}, {0, 4, 5}};
  for (const Shape& shape : shapes) {
    std::vector<std::int64_t> perm(shape.size());
    std::iota(perm.begin(), perm.end(), 0);
    std::int64_t count = 1;
    for (std::int64_t d : shape) count *= d;
    std::vector<T> data(static_cast<std::size_t>(count));
    for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<T>(i * 7 + 3);
    const Tensor x = Tensor::from_vector<T>(data, shape);
    const std::vector<std::int64_t> strides = [&] {
      std::vector<std::int64_t> s(shape.size(), 1);
      for (std::size_t d = shape.size(); d-- > 1;) s[d - 1] = s[d] * shape[d];
      return s;
    }();
    do {
      SCOPED_TRACE(::testing::Message() << dtype_name(dtype) << " " << shape_to_string(shape)
                                        << " perm " << ::testing::PrintToString(perm));
      Shape out_shape;
      for (std::int64_t axis : perm) out_shape.push_back(shape[static_cast<std::size_t>(axis)]);
      Attributes attributes;
      attributes.set("perm", perm);
      const Tensor out = run_one({"Transpose", {{x}}, {type(dtype, out_shape)}, attributes});
      std::vector<std::int64_t> coordinate(shape.size(), 0);
      for (std::int64_t i = 0; i < count; ++i) {
        std::int64_t source = 0;
        for (std::size_t d = 0; d < perm.size(); ++d) {
          source += coordinate[d] * strides[static_cast<std::size_t>(perm[d])];
        }
        ASSERT_EQ(out.data<T>()[i], data[static_cast<std::size_t>(source)]) << "at " << i;
        for (std::size_t d = out_shape.size(); d-- > 0;) {
          if (++coordinate[d] < out_shape[d]) break;
          coordinate[d] = 0;
        }
      }
    } while (std::next_permutation(perm.begin(), perm.end()));
  }
}

TEST(TensorIndexTest, TransposeMatchesItsDefinitionForEveryPermutationAndElementSize) {
  check_transposes_of<std::uint8_t>(DType::kUInt8);
  check_transposes_of<std::int16_t>(DType::kInt16);
  check_transposes_of<float>(DType::kFloat32);
  check_transposes_of<std::int64_t>(DType::kInt64);
}

// DepthToSpace and SpaceToDepth against ONNX's definitions written per
// element: with block b and C' = C / b², DCR reads channel (i * b + j) * C' + c
// and CRD channel c * b² + i * b + j for output (c, h * b + i, w * b + j);
// SpaceToDepth writes input (c, h * b + i, w * b + j) to channel
// (i * b + j) * C + c.
Attributes block_attributes(std::int64_t blocksize, const std::string& mode = "") {
  Attributes attributes;
  attributes.set("blocksize", blocksize);
  if (!mode.empty()) attributes.set("mode", mode);
  return attributes;
}

TEST(TensorIndexTest, DepthToSpaceMovesEachChannelBlockToItsPixelsInBothModes) {
  const std::int64_t n = 2, c = 3, h = 2, w = 3, b = 2, channels = c * b * b;
  const std::vector<float> input = iota(static_cast<std::size_t>(n * channels * h * w));
  for (const std::string mode : {"DCR", "CRD"}) {
    const Tensor out = run_one({"DepthToSpace",
                                {{f32({n, channels, h, w}, input)}},
                                {type(DType::kFloat32, {n, c, h * b, w * b})},
                                block_attributes(b, mode == "DCR" ? "" : mode)});
    std::vector<float> expected;
    for (std::int64_t in = 0; in < n; ++in) {
      for (std::int64_t ic = 0; ic < c; ++ic) {
        for (std::int64_t y = 0; y < h * b; ++y) {
          for (std::int64_t x = 0; x < w * b; ++x) {
            const std::int64_t i = y % b, j = x % b;
            const std::int64_t source =
                mode == "DCR" ? (i * b + j) * c + ic : ic * b * b + i * b + j;
            expected.push_back(input[static_cast<std::size_t>(
                ((in * channels + source) * h + y / b) * w + x / b)]);
          }
        }
      }
    }
    EXPECT_EQ(values<float>(out), expected) << mode;
  }
}

TEST(TensorIndexTest, SpaceToDepthStacksEachBlocksPixelsAsChannels) {
  const std::int64_t n = 1, c = 2, h = 4, w = 6, b = 2;
  const std::vector<float> input = iota(static_cast<std::size_t>(n * c * h * w));
  const Tensor out = run_one({"SpaceToDepth",
                              {{f32({n, c, h, w}, input)}},
                              {type(DType::kFloat32, {n, c * b * b, h / b, w / b})},
                              block_attributes(b)});
  std::vector<float> expected(input.size());
  for (std::int64_t ic = 0; ic < c; ++ic) {
    for (std::int64_t y = 0; y < h; ++y) {
      for (std::int64_t x = 0; x < w; ++x) {
        const std::int64_t channel = ((y % b) * b + x % b) * c + ic;
        expected[static_cast<std::size_t>((channel * (h / b) + y / b) * (w / b) + x / b)] =
            input[static_cast<std::size_t>((ic * h + y) * w + x)];
      }
    }
  }
  EXPECT_EQ(values<float>(out), expected);
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

// data[2,3,2] = 0..11. Tuples of 2 pick rows data[i][j] (2 elements each);
// tuples of 3 pick single elements; a negative index counts from the end.
TEST(TensorIndexTest, GatherNdPicksTheSliceEachIndexTupleNames) {
  const Tensor rows = run_one({"GatherND",
                               {{f32({2, 3, 2}, iota(12))}, {i64({2, 2}, {1, 2, 0, -3})}},
                               {type(DType::kFloat32, {2, 2})}});
  EXPECT_EQ(values<float>(rows), (std::vector<float>{10, 11, 0, 1}));
  const Tensor elements =
      run_one({"GatherND",
               {{f32({2, 3, 2}, iota(12))}, {i64({1, 2, 3}, {0, 1, 1, 1, 0, 0})}},
               {type(DType::kFloat32, {1, 2})}});
  EXPECT_EQ(values<float>(elements), (std::vector<float>{3, 6}));
}

// With batch_dims = 1, batch b's tuples index data[b].
TEST(TensorIndexTest, GatherNdWithABatchDimensionIndexesEachBatchApart) {
  Attributes batch;
  batch.set("batch_dims", std::int64_t{1});
  const Tensor out = run_one({"GatherND",
                              {{f32({2, 3, 2}, iota(12))}, {i64({2, 1, 1}, {2, 0})}},
                              {type(DType::kFloat32, {2, 1, 2})},
                              batch});
  EXPECT_EQ(values<float>(out), (std::vector<float>{4, 5, 6, 7}));
}

TEST(TensorIndexTest, GatherNdRefusesAnIndexOutOfRange) {
  EXPECT_THROW(run_one({"GatherND",
                        {{f32({2, 3}, iota(6))}, {i64({1, 2}, {0, 3})}},
                        {type(DType::kFloat32, {1})}}),
               Error);
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

// Trilu keeps one triangle of each matrix of the last two axes, shifted by k.
TEST(TensorIndexTest, TriluKeepsTheUpperOrLowerTriangleOfEveryMatrix) {
  const Tensor x = f32({2, 3, 4}, iota(24));
  auto trilu = [&](bool upper, std::optional<std::int64_t> k) {
    Attributes attributes;
    attributes.set("upper", std::int64_t{upper});
    std::vector<OpInput> inputs = {{x}};
    if (k) inputs.push_back({i64({}, {*k})});
    return values<float>(
        run_one({"Trilu", inputs, {type(DType::kFloat32, {2, 3, 4})}, attributes}));
  };
  for (bool upper : {true, false}) {
    for (std::optional<std::int64_t> k :
         {std::optional<std::int64_t>{}, std::optional<std::int64_t>{-1},
          std::optional<std::int64_t>{2}, std::optional<std::int64_t>{-9},
          std::optional<std::int64_t>{9}}) {
      SCOPED_TRACE(::testing::Message() << "upper=" << upper << " k=" << k.value_or(0));
      const std::vector<float> got = trilu(upper, k);
      for (std::int64_t m = 0; m < 2; ++m) {
        for (std::int64_t i = 0; i < 3; ++i) {
          for (std::int64_t j = 0; j < 4; ++j) {
            const std::int64_t at = (m * 3 + i) * 4 + j;
            const std::int64_t shift = k.value_or(0);
            const bool kept = upper ? j - i >= shift : j - i <= shift;
            EXPECT_EQ(got[at], kept ? static_cast<float>(at) : 0.0f) << "at " << at;
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace collage::native_test
