// The ops that write by index (ops_scatter.cc) on the cases ONNX's own test
// data leaves out: the reductions of opset 18, repeated indices, int32
// indices, out-of-range indices, OneHot's float indices and indices past
// depth, EyeLike's far diagonals, and ReverseSequence with the batch first.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "tensor_op_harness.h"

namespace collage::native_test {
namespace {

Attributes with_reduction(const std::string& reduction, std::int64_t axis) {
  Attributes attributes;
  attributes.set("axis", axis);
  if (!reduction.empty()) attributes.set("reduction", reduction);
  return attributes;
}

// data [[1, 2, 3], [4, 5, 6]]; along axis 1, row 0 writes 10 and 20 to
// column 2 and 30 to column 0; row 1 writes 40, 50 and 60 to column 1 (-2
// wraps to 1).
TEST(TensorScatterTest, ScatterElementsReducesRepeatedIndicesInOrder) {
  const Tensor data = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor indices = i64({2, 3}, {2, 2, 0, 1, 1, -2});
  const Tensor updates = f32({2, 3}, {10, 20, 30, 40, 50, 60});
  struct Case {
    std::string reduction;
    std::vector<float> expected;
  };
  const Case cases[] = {
      {"", {30, 2, 20, 4, 60, 6}},         {"add", {31, 2, 33, 4, 155, 6}},
      {"mul", {30, 2, 600, 4, 600000, 6}}, {"max", {30, 2, 20, 4, 60, 6}},
      {"min", {1, 2, 3, 4, 5, 6}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.reduction);
    const Tensor out = run_one({"ScatterElements",
                                {{data}, {indices}, {updates}},
                                {type(DType::kFloat32, {2, 3})},
                                with_reduction(c.reduction, 1),
                                18});
    EXPECT_EQ(values<float>(out), c.expected);
  }
}

TEST(TensorScatterTest, ScatterElementsTakesInt32IndicesAndIntegerData) {
  const Tensor out =
      run_one({"ScatterElements",
               {{i64({3, 2}, {1, 2, 3, 4, 5, 6})}, {i32({1, 2}, {2, 0})}, {i64({1, 2}, {-7, -8})}},
               {type(DType::kInt64, {3, 2})},
               with_reduction("", 0)});
  EXPECT_EQ(values<std::int64_t>(out), (std::vector<std::int64_t>{1, -8, 3, 4, -7, 6}));
}

TEST(TensorScatterTest, ScatterRefusesAnIndexOutOfRangeAndReductionsBeforeTheirOpset) {
  const OpCase out_of_range{"ScatterElements",
                            {{f32({2, 2}, {1, 2, 3, 4})}, {i64({1, 1}, {2})}, {f32({1, 1}, {9})}},
                            {type(DType::kFloat32, {2, 2})}};
  EXPECT_THROW(run_one(out_of_range), Error);
  // Scatter (opset 9 and 10) has no reduction.
  const OpCase scatter{"Scatter",
                       {{f32({2}, {1, 2})}, {i64({1}, {0})}, {f32({1}, {5})}},
                       {type(DType::kFloat32, {2})},
                       with_reduction("add", 0),
                       10};
  EXPECT_FALSE(op_supported(scatter));
}

// data [2, 2, 2]; tuples of length 1 replace whole [2, 2] slices, tuples of
// length 2 rows, reduced in index order.
TEST(TensorScatterTest, ScatterNDReplacesOrReducesSlicesOfEveryDepth) {
  std::vector<float> data_values(8);
  for (int i = 0; i < 8; ++i) data_values[static_cast<std::size_t>(i)] = static_cast<float>(i);
  const Tensor data = f32({2, 2, 2}, data_values);
  Attributes none;
  const Tensor slices = run_one({"ScatterND",
                                 {{data}, {i64({1, 1}, {-1})}, {f32({1, 2, 2}, {9, 8, 7, 6})}},
                                 {type(DType::kFloat32, {2, 2, 2})},
                                 none});
  EXPECT_EQ(values<float>(slices), (std::vector<float>{0, 1, 2, 3, 9, 8, 7, 6}));
  for (const auto& [reduction, expected] :
       {std::pair<std::string, std::vector<float>>{"max", {0, 1, 2, 3, 10, 5, 6, 7}},
        std::pair<std::string, std::vector<float>>{"min", {0, 1, 2, 3, 1, 1, 6, 7}},
        std::pair<std::string, std::vector<float>>{"add", {0, 1, 2, 3, 15, 8, 6, 7}}}) {
    SCOPED_TRACE(reduction);
    Attributes attributes;
    attributes.set("reduction", reduction);
    // Row (1, 0) twice: [10, 1], then [1, 2].
    const Tensor rows =
        run_one({"ScatterND",
                 {{data}, {i64({2, 2}, {1, 0, 1, 0})}, {f32({2, 2}, {10, 1, 1, 2})}},
                 {type(DType::kFloat32, {2, 2, 2})},
                 attributes,
                 18});
    EXPECT_EQ(values<float>(rows), expected);
  }
  const OpCase too_deep{"ScatterND",
                        {{data}, {i64({1, 4}, {0, 0, 0, 0})}, {f32({1}, {1})}},
                        {type(DType::kFloat32, {2, 2, 2})}};
  EXPECT_THROW(run_one(too_deep), Error);
}

// Indices [[1.9, -1], [7, 0]] with depth 3 on axis 0: floats truncate,
// negatives count back from depth, 7 lights nothing.
TEST(TensorScatterTest, OneHotTruncatesFloatIndicesAndSkipsThoseOutOfRange) {
  Attributes axis;
  axis.set("axis", std::int64_t{0});
  const Tensor out =
      run_one({"OneHot",
               {{f32({2, 2}, {1.9f, -1, 7, 0})}, {i64({}, {3})}, {f32({2}, {-1, 5})}},
               {type(DType::kFloat32, {3, 2, 2})},
               axis,
               11});
  EXPECT_EQ(values<float>(out), (std::vector<float>{-1, -1, -1, 5, 5, -1, -1, -1, -1, 5, -1, -1}));
  const OpCase no_depth{"OneHot",
                        {{i64({2}, {0, 1})}, {i64({}, {0})}, {f32({2}, {0, 1})}},
                        {type(DType::kFloat32, {2, 0})}};
  EXPECT_THROW(run_one(no_depth), Error);
}

TEST(TensorScatterTest, EyeLikePutsOnesOnTheDiagonalKAndNothingPastTheCorners) {
  for (const std::int64_t k : {-5, -1, 0, 2, 4}) {
    SCOPED_TRACE(k);
    Attributes attributes;
    attributes.set("k", k);
    const Tensor out = run_one({"EyeLike",
                                {{f32({3, 4}, std::vector<float>(12, 7))}},
                                {type(DType::kInt32, {3, 4})},
                                attributes});
    for (std::int64_t i = 0; i < 3; ++i) {
      for (std::int64_t j = 0; j < 4; ++j) {
        EXPECT_EQ(out.data<std::int32_t>()[i * 4 + j], j - i == k ? 1 : 0) << i << "," << j;
      }
    }
  }
}

// x [batch 2, time 3, 2], batch first: entry 0 reverses its first 2 steps,
// entry 1 all 3.
TEST(TensorScatterTest, ReverseSequenceReversesEachEntrysOwnLength) {
  Attributes axes;
  axes.set("batch_axis", std::int64_t{0});
  axes.set("time_axis", std::int64_t{1});
  const Tensor x = f32({2, 3, 2}, {0, 1, 2, 3, 4, 5, 10, 11, 12, 13, 14, 15});
  const Tensor out = run_one(
      {"ReverseSequence", {{x}, {i64({2}, {2, 3})}}, {type(DType::kFloat32, {2, 3, 2})}, axes, 10});
  EXPECT_EQ(values<float>(out), (std::vector<float>{2, 3, 0, 1, 4, 5, 14, 15, 12, 13, 10, 11}));
  const OpCase too_long{
      "ReverseSequence", {{x}, {i64({2}, {2, 4})}}, {type(DType::kFloat32, {2, 3, 2})}, axes, 10};
  EXPECT_THROW(run_one(too_long), Error);
}

// A 3x3 plane pooled by 2x2 windows, stride 1: the maxima and their flat
// indices, row-major and column-major; MaxUnpool puts them back.
TEST(TensorScatterTest, MaxPoolIndicesInBothStorageOrdersAndMaxUnpoolUndoesThem) {
  const Tensor x = f32({1, 2, 3, 3}, {1, 9, 2, 3, 4, 8, 7, 5, 6,  //
                                      0, 0, 0, 0, 0, 0, 0, 0, -1});
  for (const std::int64_t order : {0, 1}) {
    SCOPED_TRACE(order);
    Attributes attributes;
    attributes.set("kernel_shape", std::vector<std::int64_t>{2, 2});
    attributes.set("storage_order", order);
    const std::vector<Tensor> out =
        run_op({"MaxPool",
                {{x}},
                {type(DType::kFloat32, {1, 2, 2, 2}), type(DType::kInt64, {1, 2, 2, 2})},
                attributes});
    EXPECT_EQ(values<float>(out[0]), (std::vector<float>{9, 9, 7, 8, 0, 0, 0, 0}));
    // (row, col) of each maximum; ties keep the first in window order.
    const std::int64_t rows[] = {0, 0, 2, 1, 0, 0, 1, 1};
    const std::int64_t cols[] = {1, 1, 0, 2, 0, 1, 0, 1};
    for (std::size_t i = 0; i < 8; ++i) {
      const std::int64_t plane = i < 4 ? 0 : 9;
      const std::int64_t flat = order == 0 ? rows[i] * 3 + cols[i] : cols[i] * 3 + rows[i];
      EXPECT_EQ(out[1].data<std::int64_t>()[i], plane + flat) << "at " << i;
    }
    if (order != 0) continue;
    Attributes unpool;
    unpool.set("kernel_shape", std::vector<std::int64_t>{2, 2});
    unpool.set("strides", std::vector<std::int64_t>{1, 1});
    const Tensor back = run_one(
        {"MaxUnpool", {{out[0]}, {out[1]}}, {type(DType::kFloat32, {1, 2, 3, 3})}, unpool, 11});
    EXPECT_EQ(values<float>(back), (std::vector<float>{0, 9, 0, 0, 0, 8, 7, 0, 0,  //
                                                       0, 0, 0, 0, 0, 0, 0, 0, 0}));
  }
}

TEST(TensorScatterTest, IsInfHonoursItsSignSwitchesAndIsNaNFindsOnlyNaN) {
  constexpr float inf = std::numeric_limits<float>::infinity();
  const Tensor x = f32({5}, {-inf, inf, std::nanf(""), 0, 1e38f});
  EXPECT_EQ(values<bool>(run_one({"IsNaN", {{x}}, {type(DType::kBool, {5})}})),
            (std::vector<bool>{false, false, true, false, false}));
  Attributes negative_only;
  negative_only.set("detect_positive", std::int64_t{0});
  EXPECT_EQ(values<bool>(run_one({"IsInf", {{x}}, {type(DType::kBool, {5})}, negative_only, 10})),
            (std::vector<bool>{true, false, false, false, false}));
  EXPECT_EQ(values<bool>(run_one({"IsInf", {{x}}, {type(DType::kBool, {5})}, {}, 10})),
            (std::vector<bool>{true, true, false, false, false}));
}

}  // namespace
}  // namespace collage::native_test
