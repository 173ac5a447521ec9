#include "collage/ir/tensor_type.h"

#include "collage/ir/error.h"

namespace collage {

std::optional<std::int64_t> checked_numel(const Shape& shape) {
  std::int64_t count = 1;
  for (std::int64_t dim : shape) {
    if (__builtin_mul_overflow(count, dim, &count)) return std::nullopt;
  }
  return count;
}

std::optional<std::int64_t> checked_byte_size(const TensorType& type) {
  std::optional<std::int64_t> count = checked_numel(type.shape);
  std::int64_t bytes = 0;
  if (!count ||
      __builtin_mul_overflow(*count, static_cast<std::int64_t>(dtype_size(type.dtype)), &bytes)) {
    return std::nullopt;
  }
  return bytes;
}

void check_byte_size(const TensorType& type, const Error::Where& where) {
  if (checked_byte_size(type)) return;
  throw Error("the size of " + type.to_string() + " overflows int64", where);
}

std::int64_t shape_numel(const Shape& shape) {
  std::optional<std::int64_t> count = checked_numel(shape);
  if (!count) {
    throw Error("the element count of shape " + shape_to_string(shape) + " overflows int64");
  }
  return *count;
}

std::string shape_to_string(const Shape& shape) {
  std::string text = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) text += ",";
    text += std::to_string(shape[i]);
  }
  return text + "]";
}

std::string shapes_to_string(const std::map<std::string, Shape>& shapes) {
  std::string text;
  for (const auto& [name, shape] : shapes) {
    if (!text.empty()) text += " ";
    text += name + "=" + shape_to_string(shape);
  }
  return text;
}

std::int64_t TensorType::numel() const { return shape_numel(shape); }

std::size_t TensorType::byte_size() const {
  std::optional<std::int64_t> bytes = checked_byte_size(*this);
  if (!bytes) throw Error("the byte size of " + to_string() + " overflows int64");
  return static_cast<std::size_t>(*bytes);
}

std::string TensorType::to_string() const {
  if (!at_run_time) return std::string(dtype_name(dtype)) + shape_to_string(shape);
  std::string text = std::string(dtype_name(dtype)) + "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) text += ",";
    text += shape[i] == 0 ? "?" : std::to_string(shape[i]);
  }
  return text + "]";
}

}  // namespace collage
