#include "collage/ir/dtype.h"

#include <gtest/gtest.h>

#include <vector>

namespace collage {
namespace {

const std::vector<DType> kEveryDType = {DType::kFloat32, DType::kFloat64, DType::kFloat16,
                                        DType::kInt8,    DType::kUInt8,   DType::kInt16,
                                        DType::kInt32,   DType::kInt64,   DType::kBool};

TEST(DTypeTest, EachTypeIsAsWideAsItsCppElement) {
  EXPECT_EQ(dtype_size(DType::kFloat32), sizeof(float));
  EXPECT_EQ(dtype_size(DType::kFloat64), sizeof(double));
  EXPECT_EQ(dtype_size(DType::kFloat16), 2u);
  EXPECT_EQ(dtype_size(DType::kInt8), 1u);
  EXPECT_EQ(dtype_size(DType::kUInt8), 1u);
  EXPECT_EQ(dtype_size(DType::kInt16), 2u);
  EXPECT_EQ(dtype_size(DType::kInt32), 4u);
  EXPECT_EQ(dtype_size(DType::kInt64), 8u);
  EXPECT_EQ(dtype_size(DType::kBool), sizeof(bool));
}

TEST(DTypeTest, NamesAreShortAndLowerCase) {
  EXPECT_EQ(dtype_name(DType::kFloat32), "f32");
  EXPECT_EQ(dtype_name(DType::kInt64), "i64");
  EXPECT_EQ(dtype_name(DType::kUInt8), "u8");
  EXPECT_EQ(dtype_name(DType::kBool), "bool");
}

TEST(DTypeTest, EveryNameReadsBackAsItsType) {
  for (DType dtype : kEveryDType) {
    EXPECT_EQ(dtype_from_name(dtype_name(dtype)), dtype) << dtype_name(dtype);
  }
}

TEST(DTypeTest, AnUnknownNameHasNoType) {
  EXPECT_FALSE(dtype_from_name("float32").has_value());
  EXPECT_FALSE(dtype_from_name("F32").has_value());
  EXPECT_FALSE(dtype_from_name("").has_value());
}

TEST(DTypeTest, CppElementTypesMapToTheirDTypes) {
  EXPECT_EQ(dtype_of<float>(), DType::kFloat32);
  EXPECT_EQ(dtype_of<double>(), DType::kFloat64);
  EXPECT_EQ(dtype_of<std::int8_t>(), DType::kInt8);
  EXPECT_EQ(dtype_of<std::uint8_t>(), DType::kUInt8);
  EXPECT_EQ(dtype_of<std::int16_t>(), DType::kInt16);
  EXPECT_EQ(dtype_of<std::int32_t>(), DType::kInt32);
  EXPECT_EQ(dtype_of<std::int64_t>(), DType::kInt64);
  EXPECT_EQ(dtype_of<bool>(), DType::kBool);
}

}  // namespace
}  // namespace collage
