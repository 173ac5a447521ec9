#include "collage/ir/tensor_type.h"

namespace collage {

std::int64_t shape_numel(const Shape& shape) {
  std::int64_t count = 1;
  for (std::int64_t dim : shape) count *= dim;
  return count;
}

std::string shape_to_string(const Shape& shape) {
  std::string text = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) text += ",";
    text += std::to_string(shape[i]);
  }
  return text + "]";
}

std::int64_t TensorType::numel() const { return shape_numel(shape); }

std::size_t TensorType::byte_size() const {
  return static_cast<std::size_t>(numel()) * dtype_size(dtype);
}

std::string TensorType::to_string() const {
  return std::string(dtype_name(dtype)) + shape_to_string(shape);
}

}  // namespace collage
