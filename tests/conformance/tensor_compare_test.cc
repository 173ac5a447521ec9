#include "conformance/tensor_compare.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace collage::testing {
namespace {

Tensor floats(std::vector<float> values) {
  Shape shape{static_cast<std::int64_t>(values.size())};
  return Tensor::from_vector(values, shape);
}

TEST(TensorCompareTest, EqualTensorsMatch) {
  EXPECT_FALSE(compare_tensors(floats({1, 2, 3}), floats({1, 2, 3})));
}

TEST(TensorCompareTest, DifferencesWithinRelativeToleranceMatch) {
  // 1000 * 1e-3 = 1: a difference of 0.9 is allowed.
  EXPECT_FALSE(compare_tensors(floats({1000.9f}), floats({1000})));
}

TEST(TensorCompareTest, DifferencesBeyondToleranceAreReportedWithTheWorstElement) {
  auto difference = compare_tensors(floats({1, 2.5f, 3.01f}), floats({1, 2, 3}));
  ASSERT_TRUE(difference);
  EXPECT_NE(difference->find("2 of 3 elements differ"), std::string::npos) << *difference;
  EXPECT_NE(difference->find("[1]"), std::string::npos) << *difference;
}

TEST(TensorCompareTest, AbsoluteToleranceCoversValuesNearZero) {
  EXPECT_FALSE(compare_tensors(floats({5e-6f}), floats({0})));
  EXPECT_TRUE(compare_tensors(floats({5e-5f}), floats({0})));
}

TEST(TensorCompareTest, NanMatchesOnlyNan) {
  float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_FALSE(compare_tensors(floats({nan}), floats({nan})));
  EXPECT_TRUE(compare_tensors(floats({0}), floats({nan})));
  EXPECT_TRUE(compare_tensors(floats({nan}), floats({0})));
}

TEST(TensorCompareTest, InfinityMatchesOnlyItself) {
  float inf = std::numeric_limits<float>::infinity();
  EXPECT_FALSE(compare_tensors(floats({inf}), floats({inf})));
  EXPECT_TRUE(compare_tensors(floats({-inf}), floats({inf})));
  EXPECT_TRUE(compare_tensors(floats({1e30f}), floats({inf})));
}

TEST(TensorCompareTest, IntegersMustMatchExactly) {
  auto a = Tensor::from_vector<std::int64_t>({100000001}, {1});
  auto b = Tensor::from_vector<std::int64_t>({100000000}, {1});
  EXPECT_TRUE(compare_tensors(a, b));
}

TEST(TensorCompareTest, ShapeMismatchIsReported) {
  auto a = Tensor::from_vector<float>({1, 2}, {1, 2});
  auto b = Tensor::from_vector<float>({1, 2}, {2});
  auto difference = compare_tensors(a, b);
  ASSERT_TRUE(difference);
  EXPECT_NE(difference->find("f32[1,2]"), std::string::npos) << *difference;
}

TEST(TensorCompareTest, DtypeMismatchIsReported) {
  auto a = Tensor::from_vector<std::int32_t>({1}, {1});
  auto b = Tensor::from_vector<std::int64_t>({1}, {1});
  EXPECT_TRUE(compare_tensors(a, b));
}

// float16 values are decoded and compared within one unit in the last place.
TEST(TensorCompareTest, Float16ComparesItsValuesWithinOneUnitInTheLastPlace) {
  auto half = [](std::vector<std::uint16_t> bits) {
    Tensor tensor =
        Tensor::allocate(TensorType{DType::kFloat16, {static_cast<std::int64_t>(bits.size())}});
    std::copy(bits.begin(), bits.end(), static_cast<std::uint16_t*>(tensor.raw()));
    return tensor;
  };
  // 1.0, 2.0 and 1.0 + 2^-10 (the next float16 after 1.0), then 1.0 + 2^-8.
  EXPECT_FALSE(compare_tensors(half({0x3C00, 0x4000}), half({0x3C00, 0x4000})));
  EXPECT_FALSE(compare_tensors(half({0x3C01}), half({0x3C00})));
  const auto difference = compare_tensors(half({0x3C04, 0x4000}), half({0x3C00, 0x4000}));
  ASSERT_TRUE(difference);
  EXPECT_NE(difference->find("1 of 2 elements differ"), std::string::npos) << *difference;
}

}  // namespace
}  // namespace collage::testing
