#include "collage/backends/halide/constants.h"

namespace collage::halide {

const Tensor* constant_of(const Graph& graph, ValueId id) {
  if (id == kNoValue || !graph.value(id).is_constant()) return nullptr;
  return &*graph.value(id).constant;
}

std::optional<std::vector<std::int64_t>> constant_ints(const Graph& graph, ValueId id) {
  const Tensor* tensor = constant_of(graph, id);
  if (tensor == nullptr) return std::nullopt;
  if (tensor->dtype() != DType::kInt64 && tensor->dtype() != DType::kInt32) return std::nullopt;
  std::vector<std::int64_t> values;
  for (std::int64_t i = 0; i < tensor->numel(); ++i) values.push_back(tensor->int_at(i));
  return values;
}

std::optional<float> constant_scalar(const Graph& graph, ValueId id) {
  const Tensor* tensor = constant_of(graph, id);
  if (tensor == nullptr || tensor->numel() != 1) return std::nullopt;
  return static_cast<float>(tensor->number_at(0));
}

int normalized_axis(std::int64_t axis, int rank) {
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

}  // namespace collage::halide
