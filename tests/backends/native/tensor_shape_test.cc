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

TEST(TensorShapeTest, ReshapeCopiesDimensionsForZeroAndInfersMinusOne) {
  const Tensor out = run_one({"Reshape",
                              {{f32({2, 3, 4}, iota(24))}, {i64({2}, {0, -1})}},
                              {type(DType::kFloat32, {2, 12})}});
  EXPECT_EQ(out.shape(), (Shape{2, 12}));
  EXPECT_EQ(values<float>(out), iota(24));
}

TEST(TensorShapeTest, ReshapeWithAllowZeroKeepsZeroAsAnEmptyDimension) {
  Attributes allow_zero;
  allow_zero.set("allowzero", std::int64_t{1});
  const Tensor out = run_one({"Reshape",
                              {{f32({2, 0}, {})}, {i64({2}, {0, 2})}},
                              {type(DType::kFloat32, {0, 2})},
                              allow_zero,
                              14});
  EXPECT_EQ(out.shape(), (Shape{0, 2}));
}

TEST(TensorShapeTest, ReshapeWithoutAllowZeroCopiesTheInputDimension) {
  // [2,0] reshaped to [0,2] means [2,2] without allowzero: 4 elements from 0.
  EXPECT_THROW(run_one({"Reshape",
                        {{f32({2, 0}, {})}, {i64({2}, {0, 2})}},
                        {type(DType::kFloat32, {2, 2})},
                        {},
                        14}),
               Error);
}

TEST(TensorShapeTest, ReshapeRejectsAShapeThatDiffersFromTheGraphs) {
  EXPECT_THROW(run_one({"Reshape",
                        {{f32({2, 3, 4}, iota(24))}, {i64({2}, {3, -1})}},
                        {type(DType::kFloat32, {2, 12})}}),
               Error);
}

TEST(TensorShapeTest, FlattenSplitsAtTheAxis) {
  Attributes axis;
  axis.set("axis", std::int64_t{-1});
  const Tensor out =
      run_one({"Flatten", {{f32({2, 3, 4}, iota(24))}}, {type(DType::kFloat32, {6, 4})}, axis});
  EXPECT_EQ(values<float>(out), iota(24));
  axis.set("axis", std::int64_t{0});
  EXPECT_EQ(
      run_one({"Flatten", {{f32({2, 3}, iota(6))}}, {type(DType::kFloat32, {1, 6})}, axis}).shape(),
      (Shape{1, 6}));
}

TEST(TensorShapeTest, SqueezeBeforeOpset13ReadsTheAxesAttribute) {
  Attributes axes;
  axes.set("axes", std::vector<std::int64_t>{0, 2});
  const Tensor out =
      run_one({"Squeeze", {{f32({1, 3, 1}, {1, 2, 3})}}, {type(DType::kFloat32, {3})}, axes, 11});
  EXPECT_EQ(values<float>(out), (std::vector<float>{1, 2, 3}));
}

TEST(TensorShapeTest, SqueezeFromOpset13ReadsNegativeAxesFromAnInput) {
  const Tensor out = run_one({"Squeeze",
                              {{f32({1, 3, 1}, {1, 2, 3})}, {i64({1}, {-1})}},
                              {type(DType::kFloat32, {1, 3})}});
  EXPECT_EQ(out.shape(), (Shape{1, 3}));
}

TEST(TensorShapeTest, SqueezeWithoutAxesDropsEveryOne) {
  const Tensor out =
      run_one({"Squeeze", {{f32({1, 3, 1}, {1, 2, 3})}}, {type(DType::kFloat32, {3})}});
  EXPECT_EQ(out.shape(), (Shape{3}));
}

TEST(TensorShapeTest, SqueezeOfADimensionThatIsNotOneThrows) {
  EXPECT_THROW(
      run_one(
          {"Squeeze", {{f32({1, 3}, {1, 2, 3})}, {i64({1}, {1})}}, {type(DType::kFloat32, {1})}}),
      Error);
}

TEST(TensorShapeTest, UnsqueezeBeforeOpset13ReadsTheAxesAttribute) {
  Attributes axes;
  axes.set("axes", std::vector<std::int64_t>{0, 3});
  const Tensor out = run_one({"Unsqueeze",
                              {{f32({2, 2}, {1, 2, 3, 4})}},
                              {type(DType::kFloat32, {1, 2, 2, 1})},
                              axes,
                              11});
  EXPECT_EQ(values<float>(out), (std::vector<float>{1, 2, 3, 4}));
}

TEST(TensorShapeTest, UnsqueezeFromOpset13CountsNegativeAxesInTheOutputRank) {
  const Tensor out =
      run_one({"Unsqueeze", {{i64({}, {7})}, {i64({1}, {-1})}}, {type(DType::kInt64, {1})}});
  EXPECT_EQ(values<std::int64_t>(out), (std::vector<std::int64_t>{7}));
}

TEST(TensorShapeTest, ShapeReturnsTheDimensions) {
  const Tensor out = run_one({"Shape", {{f32({2, 3, 4}, iota(24))}}, {type(DType::kInt64, {3})}});
  EXPECT_EQ(values<std::int64_t>(out), (std::vector<std::int64_t>{2, 3, 4}));
}

TEST(TensorShapeTest, ShapeFromOpset15HonoursStartAndEnd) {
  Attributes range;
  range.set("start", std::int64_t{1});
  range.set("end", std::int64_t{-1});
  const Tensor out =
      run_one({"Shape", {{f32({2, 3, 4, 5}, iota(120))}}, {type(DType::kInt64, {2})}, range, 15});
  EXPECT_EQ(values<std::int64_t>(out), (std::vector<std::int64_t>{3, 4}));
}

TEST(TensorShapeTest, SizeCountsElements) {
  const Tensor out = run_one({"Size", {{f32({2, 3, 4}, iota(24))}}, {type(DType::kInt64, {})}});
  EXPECT_EQ(values<std::int64_t>(out), (std::vector<std::int64_t>{24}));
}

TEST(TensorShapeTest, CastFromFloatTruncatesTowardZero) {
  const Tensor out =
      run_one({"Cast", {{f32({4}, {-1.7f, 2.9f, 0.2f, -0.2f})}}, {type(DType::kInt64, {4})}});
  EXPECT_EQ(values<std::int64_t>(out), (std::vector<std::int64_t>{-1, 2, 0, 0}));
}

TEST(TensorShapeTest, CastBetweenBoolAndNumbers) {
  EXPECT_EQ(
      values<bool>(run_one({"Cast", {{f32({3}, {0.0f, -2.5f, 1.0f})}}, {type(DType::kBool, {3})}})),
      (std::vector<bool>{false, true, true}));
  EXPECT_EQ(values<float>(
                run_one({"Cast", {{boolean({2}, {true, false})}}, {type(DType::kFloat32, {2})}})),
            (std::vector<float>{1.0f, 0.0f}));
}

TEST(TensorShapeTest, CastWidensAndNarrowsIntegers) {
  EXPECT_EQ(
      values<double>(run_one({"Cast", {{i64({2}, {-3, 1 << 20})}}, {type(DType::kFloat64, {2})}})),
      (std::vector<double>{-3.0, 1048576.0}));
  EXPECT_EQ(values<std::int32_t>(
                run_one({"Cast", {{i64({2}, {-3, 70000})}}, {type(DType::kInt32, {2})}})),
            (std::vector<std::int32_t>{-3, 70000}));
  EXPECT_EQ(
      values<std::uint8_t>(run_one({"Cast", {{i32({2}, {7, 255})}}, {type(DType::kUInt8, {2})}})),
      (std::vector<std::uint8_t>{7, 255}));
}

// float16 keeps 11 significant bits; a float halfway between two of its
// values rounds to the one with an even last bit, and the way back is exact.
TEST(TensorShapeTest, CastToAndFromFloat16RoundsToNearestEven) {
  const float ulp = 1.0f / 1024;  // of float16 at 1.0
  const Tensor half = run_one({"Cast",
                               {{f32({4}, {1.0f, 1.0f + ulp / 2, 1.0f + 3 * ulp / 2, 65536.0f})}},
                               {type(DType::kFloat16, {4})}});
  const auto* bits = static_cast<const std::uint16_t*>(half.raw());
  EXPECT_EQ(std::vector<std::uint16_t>(bits, bits + 4),
            (std::vector<std::uint16_t>{0x3C00, 0x3C00, 0x3C02, 0x7C00}));
  const Tensor back = run_one({"Cast", {{half}}, {type(DType::kFloat32, {4})}});
  EXPECT_EQ(values<float>(back), (std::vector<float>{1.0f, 1.0f, 1.0f + 2 * ulp,
                                                     std::numeric_limits<float>::infinity()}));
  // CastLike takes the type of its second input, which the graph gives.
  const Tensor like =
      run_one({"CastLike", {{half}, {f32({1}, {0.0f})}}, {type(DType::kFloat32, {4})}});
  EXPECT_EQ(values<float>(like), values<float>(back));
}

TEST(TensorShapeTest, RangeCountsUpDownAndInFloat) {
  EXPECT_EQ(values<std::int64_t>(run_one({"Range",
                                          {{i64({}, {1})}, {i64({}, {10})}, {i64({}, {3})}},
                                          {type(DType::kInt64, {3})}})),
            (std::vector<std::int64_t>{1, 4, 7}));
  EXPECT_EQ(values<std::int64_t>(run_one({"Range",
                                          {{i64({}, {10})}, {i64({}, {4})}, {i64({}, {-2})}},
                                          {type(DType::kInt64, {3})}})),
            (std::vector<std::int64_t>{10, 8, 6}));
  expect_near(run_one({"Range",
                       {{f32({}, {0})}, {f32({}, {1})}, {f32({}, {0.25f})}},
                       {type(DType::kFloat32, {4})}}),
              {0, 0.25f, 0.5f, 0.75f});
}

TEST(TensorShapeTest, RangeThatWouldBeEmptyHasNoElements) {
  const Tensor out = run_one(
      {"Range", {{i64({}, {5})}, {i64({}, {1})}, {i64({}, {1})}}, {type(DType::kInt64, {0})}});
  EXPECT_EQ(out.numel(), 0);
}

TEST(TensorShapeTest, ConstantOfShapeFillsWithTheValue) {
  Attributes value;
  value.set("value", i64({1}, {-3}));
  const Tensor out =
      run_one({"ConstantOfShape", {{i64({2}, {2, 3})}}, {type(DType::kInt64, {2, 3})}, value});
  EXPECT_EQ(values<std::int64_t>(out), (std::vector<std::int64_t>(6, -3)));
}

TEST(TensorShapeTest, ConstantOfShapeDefaultsToFloatZero) {
  const Tensor out = run_one({"ConstantOfShape", {{i64({1}, {4})}}, {type(DType::kFloat32, {4})}});
  EXPECT_EQ(values<float>(out), (std::vector<float>(4, 0.0f)));
}

TEST(TensorShapeTest, ConstantProducesEachValueForm) {
  Attributes tensor;
  tensor.set("value", f32({2}, {1.5f, -1}));
  EXPECT_EQ(values<float>(run_one({"Constant", {}, {type(DType::kFloat32, {2})}, tensor})),
            (std::vector<float>{1.5f, -1}));
  Attributes one_float;
  one_float.set("value_float", 2.5f);
  EXPECT_EQ(values<float>(run_one({"Constant", {}, {type(DType::kFloat32, {})}, one_float})),
            (std::vector<float>{2.5f}));
  Attributes floats;
  floats.set("value_floats", std::vector<float>{1, 2, 3});
  EXPECT_EQ(values<float>(run_one({"Constant", {}, {type(DType::kFloat32, {3})}, floats})),
            (std::vector<float>{1, 2, 3}));
  Attributes one_int;
  one_int.set("value_int", std::int64_t{-4});
  EXPECT_EQ(values<std::int64_t>(run_one({"Constant", {}, {type(DType::kInt64, {})}, one_int})),
            (std::vector<std::int64_t>{-4}));
  Attributes ints;
  ints.set("value_ints", std::vector<std::int64_t>{5, 6});
  EXPECT_EQ(values<std::int64_t>(run_one({"Constant", {}, {type(DType::kInt64, {2})}, ints})),
            (std::vector<std::int64_t>{5, 6}));
}

TEST(TensorShapeTest, ConstantWithAStringValueIsNotSupported) {
  Attributes text;
  text.set("value_string", std::string("hello"));
  EXPECT_FALSE(op_supported({"Constant", {}, {type(DType::kUInt8, {5})}, text}));
}

TEST(TensorShapeTest, DropoutIsTheIdentityWithAFullMask) {
  const std::vector<Tensor> out =
      run_op({"Dropout",
              {{f32({3}, {1, 2, 3})}, constant(f32({}, {0.5f})), constant(boolean({}, {false}))},
              {type(DType::kFloat32, {3}), type(DType::kBool, {3})},
              {},
              13});
  EXPECT_EQ(values<float>(out[0]), (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(values<bool>(out[1]), (std::vector<bool>{true, true, true}));
}

TEST(TensorShapeTest, DropoutInTrainingModeIsNotSupported) {
  OpCase op{"Dropout",
            {{f32({3}, {1, 2, 3})}, constant(f32({}, {0.5f})), constant(boolean({}, {true}))},
            {type(DType::kFloat32, {3})}};
  Graph graph = single_node_graph(op);
  EXPECT_FALSE(native_evaluator().can_evaluate(graph, graph.node(0)));
}

TEST(TensorShapeTest, DropoutWithARuntimeTrainingFlagIsNotSupported) {
  OpCase op{"Dropout",
            {{f32({3}, {1, 2, 3})}, constant(f32({}, {0.5f})), {boolean({}, {false})}},
            {type(DType::kFloat32, {3})}};
  Graph graph = single_node_graph(op);
  EXPECT_FALSE(native_evaluator().can_evaluate(graph, graph.node(0)));
}

TEST(TensorShapeTest, IdentityCopiesInt64) {
  EXPECT_EQ(values<std::int64_t>(
                run_one({"Identity", {{i64({2}, {9, -9})}}, {type(DType::kInt64, {2})}})),
            (std::vector<std::int64_t>{9, -9}));
}

}  // namespace
}  // namespace collage::native_test
