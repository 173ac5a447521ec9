#include "collage/ir/tensor_type.h"

#include <gtest/gtest.h>

#include <limits>

#include "collage/ir/error.h"
#include "collage/ir/tensor.h"

namespace collage {
namespace {

constexpr std::int64_t k2To62 = std::int64_t{1} << 62;

TEST(TensorTypeTest, ElementCountsMultiplyTheDimensions) {
  EXPECT_EQ(shape_numel({2, 3, 4}), 24);
  EXPECT_EQ(shape_numel({}), 1);
  EXPECT_EQ(shape_numel({5, 0}), 0);
}

// [2^62, 4] used to wrap around to 0 elements: a 0-byte buffer that kernels
// then wrote 2^64 elements into.
TEST(TensorTypeTest, AnElementCountThatOverflowsIsAnErrorNamingTheShape) {
  EXPECT_FALSE(checked_numel({k2To62, 4}).has_value());
  try {
    shape_numel({k2To62, 4});
    FAIL() << "no error";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("[4611686018427387904,4]"), std::string::npos)
        << error.what();
  }
}

TEST(TensorTypeTest, AByteSizeThatOverflowsIsAnError) {
  const TensorType type{DType::kFloat32, {k2To62}};
  EXPECT_EQ(type.numel(), k2To62);
  EXPECT_FALSE(checked_byte_size(type).has_value());
  EXPECT_THROW(type.byte_size(), Error);
  EXPECT_THROW(Tensor::allocate(type), Error);
}

TEST(TensorTypeTest, CheckByteSizeNamesWhereTheTypeCameFrom) {
  try {
    check_byte_size(TensorType{DType::kInt64, {k2To62, 2}}, {.field = "input 'x'"});
    FAIL() << "no error";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("input 'x'"), std::string::npos) << error.what();
  }
  EXPECT_NO_THROW(check_byte_size(TensorType{DType::kInt64, {1024, 1024}}, {}));
}

}  // namespace
}  // namespace collage
