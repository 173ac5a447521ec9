#include "collage/api/conversions.h"

#include <memory>

#include "collage/ir/error.h"

namespace collage::api {
namespace {

struct TypePair {
  ElementType element;
  DType dtype;
};
constexpr TypePair kTypes[] = {
    {ElementType::kFloat32, DType::kFloat32}, {ElementType::kFloat64, DType::kFloat64},
    {ElementType::kFloat16, DType::kFloat16}, {ElementType::kInt8, DType::kInt8},
    {ElementType::kUInt8, DType::kUInt8},     {ElementType::kInt16, DType::kInt16},
    {ElementType::kInt32, DType::kInt32},     {ElementType::kInt64, DType::kInt64},
    {ElementType::kBool, DType::kBool},
};

}  // namespace

DType to_dtype(ElementType type) {
  for (const TypePair& pair : kTypes) {
    if (pair.element == type) return pair.dtype;
  }
  throw Error("unknown element type");
}

ElementType to_element_type(DType dtype) {
  for (const TypePair& pair : kTypes) {
    if (pair.dtype == dtype) return pair.element;
  }
  throw Error("unknown element type");
}

Tensor to_tensor(const Array& array) {
  if (array.empty()) return Tensor();
  // The Array (a shared handle) keeps the buffer alive as long as the tensor.
  auto keep = std::make_shared<Array>(array);
  return Tensor::view(TensorType{to_dtype(array.type()), array.dims()}, keep, keep->data());
}

Array to_array(const Tensor& tensor) {
  if (tensor.empty()) return Array();
  auto keep = std::make_shared<Tensor>(tensor);
  return Array::shared(to_element_type(tensor.dtype()), tensor.shape(), keep, keep->raw());
}

std::map<std::string, Tensor> to_tensors(const std::map<std::string, Array>& arrays) {
  std::map<std::string, Tensor> tensors;
  for (const auto& [name, array] : arrays) tensors.emplace(name, to_tensor(array));
  return tensors;
}

std::map<std::string, Shape> to_shapes(
    const std::map<std::string, std::vector<std::int64_t>>& dims) {
  std::map<std::string, Shape> shapes;
  for (const auto& [name, shape] : dims) shapes.emplace(name, Shape(shape.begin(), shape.end()));
  return shapes;
}

}  // namespace collage::api
