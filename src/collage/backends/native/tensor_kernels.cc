#include "collage/backends/native/tensor_kernels.h"

#include <algorithm>

namespace collage::native {

Error node_error(const Node& node, const std::string& message) {
  return Error(node.op_type + ": " + message, {.node = node.name});
}

std::optional<DType> input_dtype(const Graph& graph, const Node& node, std::size_t i) {
  const ValueId value = node.input(i);
  if (value == kNoValue) return std::nullopt;
  return graph.type(value).dtype;
}

DType output_dtype(const Graph& graph, const Node& node, std::size_t i) {
  return graph.type(node.outputs[i]).dtype;
}

bool is_one_of(DType dtype, std::initializer_list<DType> allowed) {
  return std::find(allowed.begin(), allowed.end(), dtype) != allowed.end();
}

bool input_is(const Graph& graph, const Node& node, std::size_t i,
              std::initializer_list<DType> allowed) {
  const std::optional<DType> dtype = input_dtype(graph, node, i);
  return dtype && is_one_of(*dtype, allowed);
}

std::vector<std::int64_t> read_ints(const Tensor& tensor) {
  std::vector<std::int64_t> values(static_cast<std::size_t>(tensor.numel()));
  for (std::int64_t i = 0; i < tensor.numel(); ++i) {
    values[static_cast<std::size_t>(i)] = tensor.int_at(i);
  }
  return values;
}

std::int64_t resolve_axis(std::int64_t axis, std::int64_t rank, const Node& node) {
  if (axis < -rank || axis >= rank) {
    throw node_error(
        node, "axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  }
  return axis < 0 ? axis + rank : axis;
}

std::optional<std::vector<std::int64_t>> ints_from_input_or_attribute(
    const Graph& graph, const Node& node, std::span<const Tensor> inputs, std::size_t input,
    const std::string& attribute, std::int64_t input_since) {
  if (graph.opset >= input_since) {
    if (input >= inputs.size() || inputs[input].empty()) return std::nullopt;
    return read_ints(inputs[input]);
  }
  if (!node.attributes.has(attribute)) return std::nullopt;
  return node.attributes.get_ints(attribute);
}

void store_number(DType dtype, double value, void* destination) {
  visit_dtype(dtype, [&](auto type) {
    using T = typename decltype(type)::type;
    *static_cast<T*>(destination) = static_cast<T>(value);
  });
}

}  // namespace collage::native
