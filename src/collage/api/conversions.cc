#include "collage/api/conversions.h"

#include <memory>

#include "collage/ir/error.h"

namespace collage::api {

Tensor to_tensor(const Array& array) {
  if (array.empty()) return Tensor();
  // The Array (a shared handle) keeps the buffer alive as long as the tensor.
  auto keep = std::make_shared<Array>(array);
  return Tensor::view(TensorType{array.type(), array.dims()}, keep, keep->data());
}

Array to_array(const Tensor& tensor) {
  if (tensor.empty()) return Array();
  auto keep = std::make_shared<Tensor>(tensor);
  return Array::shared(tensor.dtype(), tensor.shape(), keep, keep->raw());
}

std::map<std::string, Tensor> to_tensors(const std::map<std::string, Array>& arrays) {
  std::map<std::string, Tensor> tensors;
  for (const auto& [name, array] : arrays) tensors.emplace(name, to_tensor(array));
  return tensors;
}

}  // namespace collage::api
