// collage::Array (include/collage/array.h).
#include "collage/array.h"

#include <fmt/format.h>

#include "collage/api/conversions.h"
#include "collage/ir/dtype.h"
#include "collage/ir/error.h"
#include "collage/runtime/npy.h"

namespace collage {
namespace {

void check_dims(const std::vector<std::int64_t>& dims) {
  for (std::int64_t dim : dims) {
    if (dim < 0)
      throw Error(fmt::format("negative dimension {} in [{}]", dim, fmt::join(dims, ",")));
  }
}

}  // namespace

std::size_t element_size(ElementType type) { return dtype_size(type); }

std::string element_type_name(ElementType type) {
  switch (type) {
    case ElementType::kFloat32:
      return "float32";
    case ElementType::kFloat64:
      return "float64";
    case ElementType::kFloat16:
      return "float16";
    case ElementType::kInt8:
      return "int8";
    case ElementType::kUInt8:
      return "uint8";
    case ElementType::kInt16:
      return "int16";
    case ElementType::kInt32:
      return "int32";
    case ElementType::kInt64:
      return "int64";
    case ElementType::kBool:
      return "bool";
  }
  return "unknown";
}

Array Array::allocate(ElementType type, std::vector<std::int64_t> dims) {
  check_dims(dims);
  return api::one_error_type([&] { return api::to_array(Tensor::zeros(TensorType{type, dims})); });
}

Array Array::view(ElementType type, std::vector<std::int64_t> dims, void* data) {
  if (data == nullptr) throw Error("Array::view of a null pointer");
  check_dims(dims);
  return Array(type, std::move(dims), nullptr, data);
}

Array Array::shared(ElementType type, std::vector<std::int64_t> dims, std::shared_ptr<void> owner,
                    void* data) {
  if (data == nullptr) throw Error("Array::shared of a null pointer");
  check_dims(dims);
  return Array(type, std::move(dims), std::move(owner), data);
}

std::int64_t Array::size() const {
  std::int64_t count = 1;
  for (std::int64_t dim : dims_) count *= dim;
  return count;
}

std::string Array::to_string() const {
  if (empty()) return "empty";
  return fmt::format("{}[{}]", element_type_name(type_), fmt::join(dims_, ","));
}

void Array::check_element_type(ElementType wanted) const {
  if (wanted == type_) return;
  throw Error(fmt::format("the array holds {}, not {}", element_type_name(type_),
                          element_type_name(wanted)));
}

void Array::check_element_count(std::size_t count) const {
  if (static_cast<std::int64_t>(count) == size()) return;
  throw Error(fmt::format("{} values do not fill {}", count, to_string()));
}

Array load_npy(const std::string& path) {
  return api::one_error_type([&] { return api::to_array(read_npy(path)); });
}

void save_npy(const std::string& path, const Array& array) {
  if (array.empty()) throw Error("an empty array", {.file = path});
  api::one_error_type([&] { write_npy(path, api::to_tensor(array)); });
}

}  // namespace collage
