#include "collage/backends/native/tensor_kernels.h"

#include <algorithm>

#include "collage/backends/native/broadcast.h"

namespace collage::native {

Error node_error(const Node& node, const std::string& message) {
  return Error(node.op_type + ": " + message, {.node = node.name});
}

void check_output_shape(const Node& node, const Tensor& out, const Shape& expected) {
  if (out.shape() == expected) return;
  throw node_error(node, "computed output shape " + shape_to_string(expected) +
                             " differs from the graph's " + shape_to_string(out.shape()));
}

std::int64_t wrap_index(std::int64_t index, std::int64_t dim, const Node& node) {
  if (index < -dim || index >= dim) {
    throw node_error(node, "index " + std::to_string(index) +
                               " is out of range for a dimension of " + std::to_string(dim));
  }
  return index < 0 ? index + dim : index;
}

std::vector<std::int64_t> offsets_along_axis(const Node& node, const Shape& data,
                                             const Tensor& indices, std::size_t axis) {
  const Shape& index_shape = indices.shape();
  if (index_shape.size() != data.size()) throw node_error(node, "indices and data differ in rank");
  for (std::size_t d = 0; d < data.size(); ++d) {
    if (d != axis && index_shape[d] > data[d]) {
      throw node_error(node, "indices are larger than data outside the axis");
    }
  }
  const std::vector<std::int64_t> strides = row_major_strides(data);
  std::vector<std::int64_t> offsets(static_cast<std::size_t>(indices.numel()));
  std::vector<std::int64_t> coordinate(index_shape.size(), 0);
  for (std::int64_t i = 0; i < indices.numel(); ++i) {
    std::int64_t offset = 0;
    for (std::size_t d = 0; d < data.size(); ++d) {
      const std::int64_t at =
          d == axis ? wrap_index(indices.int_at(i), data[d], node) : coordinate[d];
      offset += at * strides[d];
    }
    offsets[static_cast<std::size_t>(i)] = offset;
    // Advance the coordinate in row-major order.
    for (std::size_t d = index_shape.size(); d-- > 0;) {
      if (++coordinate[d] < index_shape[d]) break;
      coordinate[d] = 0;
    }
  }
  return offsets;
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

bool check_data_and_output(const Graph& graph, const Node& node) {
  const std::optional<DType> dtype = input_dtype(graph, node, 0);
  return dtype && dtype_size(*dtype) <= 8 && output_dtype(graph, node, 0) == *dtype;
}

std::int64_t dims_product(const Shape& shape, std::size_t begin, std::size_t end) {
  std::int64_t product = 1;
  for (std::size_t d = begin; d < end; ++d) product *= shape[d];
  return product;
}

}  // namespace collage::native
