#include "collage/ir/tensor.h"

#include <cstdlib>
#include <cstring>
#include <new>

namespace collage {
namespace {

constexpr std::size_t kAlignment = 64;

std::shared_ptr<void> aligned_buffer(std::size_t bytes) {
  std::size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
  if (rounded == 0) rounded = kAlignment;
  void* memory = std::aligned_alloc(kAlignment, rounded);
  if (memory == nullptr) throw std::bad_alloc();
  return std::shared_ptr<void>(memory, std::free);
}

}  // namespace

Tensor Tensor::allocate(TensorType type) {
  std::shared_ptr<void> buffer = aligned_buffer(type.byte_size());
  void* data = buffer.get();
  return Tensor(std::move(type), std::move(buffer), data);
}

Tensor Tensor::zeros(TensorType type) {
  Tensor tensor = allocate(std::move(type));
  std::memset(tensor.raw(), 0, tensor.byte_size());
  return tensor;
}

Tensor Tensor::borrow(TensorType type, std::shared_ptr<const void> owner, const void* data) {
  return Tensor(std::move(type), std::move(owner), const_cast<void*>(data));
}

Tensor Tensor::view(TensorType type, std::shared_ptr<const void> owner, void* data) {
  return Tensor(std::move(type), std::move(owner), data);
}

Tensor Tensor::clone() const {
  Tensor copy = allocate(type_);
  if (byte_size() > 0) std::memcpy(copy.raw(), raw(), byte_size());
  return copy;
}

Tensor Tensor::reshaped(Shape shape) const {
  assert(shape_numel(shape) == numel() && "Tensor::reshaped: element count differs");
  return Tensor(TensorType{dtype(), std::move(shape)}, owner_, data_);
}

std::int64_t Tensor::int_at(std::int64_t i) const {
  switch (dtype()) {
    case DType::kInt64:
      return data<std::int64_t>()[i];
    case DType::kInt32:
      return data<std::int32_t>()[i];
    case DType::kInt16:
      return data<std::int16_t>()[i];
    case DType::kInt8:
      return data<std::int8_t>()[i];
    case DType::kUInt8:
      return data<std::uint8_t>()[i];
    case DType::kBool:
      return static_cast<const std::uint8_t*>(raw())[i] != 0;
    default:
      assert(false && "Tensor::int_at on a floating-point tensor");
      return 0;
  }
}

double Tensor::number_at(std::int64_t i) const {
  switch (dtype()) {
    case DType::kFloat32:
      return data<float>()[i];
    case DType::kFloat64:
      return data<double>()[i];
    case DType::kFloat16:
      assert(false && "Tensor::number_at on float16");
      return 0;
    default:
      return static_cast<double>(int_at(i));
  }
}

}  // namespace collage
