#include "collage/ir/tensor.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <vector>

namespace collage {
namespace {

TensorType f32(Shape shape) { return TensorType{DType::kFloat32, std::move(shape)}; }

TEST(TensorTest, ADefaultTensorHoldsNoBuffer) {
  Tensor tensor;
  EXPECT_TRUE(tensor.empty());
  EXPECT_FALSE(Tensor::allocate(f32({2})).empty());
}

TEST(TensorTest, FromVectorHoldsTheValuesInOrderUnderTheShape) {
  Tensor tensor = Tensor::from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_EQ(tensor.type(), f32({2, 3}));
  EXPECT_EQ(tensor.rank(), 2);
  EXPECT_EQ(tensor.numel(), 6);
  EXPECT_EQ(tensor.byte_size(), 24u);
  EXPECT_EQ(tensor.data<float>()[4], 5.0f);
}

TEST(TensorTest, AScalarHasRankZeroAndOneElement) {
  Tensor scalar = Tensor::from_vector<std::int64_t>({7}, {});
  EXPECT_EQ(scalar.rank(), 0);
  EXPECT_EQ(scalar.numel(), 1);
  EXPECT_EQ(scalar.int_at(0), 7);
}

TEST(TensorTest, ZerosFillsEveryByteWithZero) {
  Tensor tensor = Tensor::zeros(TensorType{DType::kInt32, {3, 5}});
  const auto* bytes = static_cast<const unsigned char*>(tensor.raw());
  EXPECT_EQ(std::vector<unsigned char>(bytes, bytes + tensor.byte_size()),
            std::vector<unsigned char>(60, 0));
}

TEST(TensorTest, AllocatedBuffersAreAlignedTo64Bytes) {
  for (std::int64_t n : {0, 1, 3, 17, 1000}) {
    Tensor tensor = Tensor::allocate(f32({n}));
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(tensor.raw()) % 64, 0u) << n << " elements";
  }
}

TEST(TensorTest, AFreedLargeBufferServesTheNextAllocationOfItsSize) {
  // 32K floats: 128 KiB, which glibc would map afresh on every allocation.
  const std::int64_t n = 32 * 1024;
  void* first = nullptr;
  {
    Tensor tensor = Tensor::allocate(f32({n}));
    first = tensor.raw();
    tensor.data<float>()[n - 1] = 1.0f;
  }
  const std::size_t kept = Tensor::pooled_bytes();
  EXPECT_GE(kept, static_cast<std::size_t>(n) * 4);
  Tensor again = Tensor::allocate(f32({n}));
  EXPECT_EQ(again.raw(), first);
  // The buffer holds the tensor and the bytes that may be read past its end.
  EXPECT_EQ(Tensor::pooled_bytes(), kept - static_cast<std::size_t>(n) * 4 - kReadSlackBytes);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(again.raw()) % 64, 0u);
  EXPECT_TRUE(again.readable_past_end());
  EXPECT_TRUE(again.reshaped({n / 2, 2}).readable_past_end());
  EXPECT_FALSE(Tensor::borrow(again.type(), nullptr, again.raw()).readable_past_end());
  // A buffer in use is not handed out again, and zeros() still clears.
  Tensor zeros = Tensor::zeros(f32({n}));
  EXPECT_NE(zeros.raw(), first);
  EXPECT_EQ(zeros.data<float>()[n - 1], 0.0f);
}

TEST(TensorTest, FreedBuffersKeptNeverExceedThePoolCapacity) {
  // Twice the capacity in buffers of distinct sizes, each freed at once.
  const std::size_t step = std::size_t{8} << 20;
  for (std::size_t i = 0; i < 2 * kPoolCapacityBytes / step; ++i) {
    const auto floats = static_cast<std::int64_t>((step + i * 64) / 4);
    Tensor tensor = Tensor::allocate(f32({floats}));
    EXPECT_LE(Tensor::pooled_bytes(), kPoolCapacityBytes);
  }
  EXPECT_LE(Tensor::pooled_bytes(), kPoolCapacityBytes);
  // A small buffer is never kept.
  const std::size_t before = Tensor::pooled_bytes();
  { Tensor small = Tensor::allocate(f32({16})); }
  EXPECT_EQ(Tensor::pooled_bytes(), before);
}

TEST(TensorTest, CopiesShareTheBuffer) {
  Tensor original = Tensor::from_vector<float>({1, 2}, {2});
  Tensor copy = original;
  copy.data<float>()[0] = 9;
  EXPECT_EQ(original.raw(), copy.raw());
  EXPECT_EQ(original.data<float>()[0], 9.0f);
}

TEST(TensorTest, ACloneHasItsOwnBufferWithTheSameValues) {
  Tensor original = Tensor::from_vector<float>({1, 2}, {2});
  Tensor clone = original.clone();
  clone.data<float>()[0] = 9;
  EXPECT_NE(original.raw(), clone.raw());
  EXPECT_EQ(clone.type(), original.type());
  EXPECT_EQ(original.data<float>()[0], 1.0f);
  EXPECT_EQ(clone.data<float>()[1], 2.0f);
}

TEST(TensorTest, ReshapedSeesTheSameBufferUnderAnotherShape) {
  Tensor tensor = Tensor::from_vector<float>({1, 2, 3, 4, 5, 6}, {6});
  Tensor matrix = tensor.reshaped({3, 2});
  EXPECT_EQ(matrix.shape(), (Shape{3, 2}));
  EXPECT_EQ(matrix.raw(), tensor.raw());
  EXPECT_EQ(tensor.shape(), (Shape{6}));
}

TEST(TensorTest, ABorrowedTensorKeepsItsOwnerAlive) {
  auto owner = std::make_shared<std::vector<float>>(std::vector<float>{4, 5});
  std::weak_ptr<std::vector<float>> watch = owner;
  Tensor tensor = Tensor::borrow(f32({2}), owner, owner->data());
  owner.reset();
  EXPECT_FALSE(watch.expired());
  EXPECT_EQ(tensor.data<float>()[1], 5.0f);
  tensor = Tensor();
  EXPECT_TRUE(watch.expired());
}

TEST(TensorTest, AViewWritesIntoTheCallersBuffer) {
  std::vector<float> buffer(3, 0.0f);
  Tensor tensor = Tensor::view(f32({3}), nullptr, buffer.data());
  tensor.data<float>()[2] = 8;
  EXPECT_EQ(buffer[2], 8.0f);
}

TEST(TensorTest, IntAtReadsEveryIntegerAndBoolTypeAsInt64) {
  EXPECT_EQ(Tensor::from_vector<std::int32_t>({-3, 4}, {2}).int_at(0), -3);
  EXPECT_EQ(Tensor::from_vector<std::int16_t>({-300}, {1}).int_at(0), -300);
  EXPECT_EQ(Tensor::from_vector<std::int8_t>({-7}, {1}).int_at(0), -7);
  EXPECT_EQ(Tensor::from_vector<std::uint8_t>({255}, {1}).int_at(0), 255);
  EXPECT_EQ(Tensor::from_vector<bool>({false, true}, {2}).int_at(1), 1);
}

TEST(TensorTest, NumberAtReadsFloatsAndIntegersAsDouble) {
  EXPECT_DOUBLE_EQ(Tensor::from_vector<float>({0.5f}, {1}).number_at(0), 0.5);
  EXPECT_DOUBLE_EQ(Tensor::from_vector<double>({-2.25}, {1}).number_at(0), -2.25);
  EXPECT_DOUBLE_EQ(Tensor::from_vector<std::int64_t>({1, 42}, {2}).number_at(1), 42.0);
}

}  // namespace
}  // namespace collage
