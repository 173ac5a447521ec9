// The shared vocabulary of the native tensor op files.
//
// tensor_ops() is assembled from five tables, one per file: elementwise
// math and logic (ops_elementwise.cc), shape and type ops (ops_shape.cc),
// data movement and indexing (ops_index.cc), writing from computed
// positions (ops_expand.cc), and writing by index (ops_scatter.cc). The helpers here are what those
// ops all need: errors that name the node, reading shape and axis inputs, an
// opset-dependent "input or attribute" lookup, and dispatch on dtype.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "collage/backends/native/op_registry.h"
#include "collage/ir/error.h"

namespace collage::native {

std::span<const OpEntry> elementwise_ops();
std::span<const OpEntry> shape_ops();
std::span<const OpEntry> index_ops();
std::span<const OpEntry> expand_ops();
std::span<const OpEntry> scatter_ops();

// An Error about `node`, named by its name and op type.
Error node_error(const Node& node, const std::string& message);

// The dtype of the node's i-th input or output; nullopt for an omitted input.
std::optional<DType> input_dtype(const Graph& graph, const Node& node, std::size_t i);
DType output_dtype(const Graph& graph, const Node& node, std::size_t i);
bool is_one_of(DType dtype, std::initializer_list<DType> allowed);
// Whether the node's i-th input is present and one of `allowed`.
bool input_is(const Graph& graph, const Node& node, std::size_t i,
              std::initializer_list<DType> allowed);

// Throws an Error naming the node when the output's shape is not `expected`.
void check_output_shape(const Node& node, const Tensor& out, const Shape& expected);

// An index in [-dim, dim) as an offset in [0, dim); throws an Error naming
// the node otherwise.
std::int64_t wrap_index(std::int64_t index, std::int64_t dim, const Node& node);

// For GatherElements and ScatterElements: per element of `indices` (of the
// data's rank, no larger outside `axis`), the row-major offset in `data` of
// the element it addresses, its own coordinates with `axis` replaced by its
// value. Throws an Error naming the node for indices that do not fit.
std::vector<std::int64_t> offsets_along_axis(const Node& node, const Shape& data,
                                             const Tensor& indices, std::size_t axis);

// Whether input 0 is of a dtype of at most 8 bytes and output 0 of the same.
bool check_data_and_output(const Graph& graph, const Node& node);

// The product of shape[begin, end).
std::int64_t dims_product(const Shape& shape, std::size_t begin, std::size_t end);

// All elements of an integer tensor (shape, axes, indices inputs) as int64.
std::vector<std::int64_t> read_ints(const Tensor& tensor);

// `axis` in [-rank, rank) mapped to [0, rank); throws an Error naming the
// node otherwise.
std::int64_t resolve_axis(std::int64_t axis, std::int64_t rank, const Node& node);

// A list of ints that moved from an attribute to an input at opset
// `input_since` (Squeeze's axes, Split's split, Pad's pads): from the input
// (an empty Tensor when omitted) at that opset and later, else from the
// attribute. nullopt when neither is given.
std::optional<std::vector<std::int64_t>> ints_from_input_or_attribute(
    const Graph& graph, const Node& node, std::span<const Tensor> inputs, std::size_t input,
    const std::string& attribute, std::int64_t input_since);

// Writes `value` converted to `dtype` into `destination` (fill values).
void store_number(DType dtype, double value, void* destination);

// Calls f(std::type_identity<T>{}) with T the C++ type of `dtype`, for the
// types the tensor ops compute on; throws Error for others (float16).
template <typename F>
decltype(auto) visit_dtype(DType dtype, F&& f) {
  switch (dtype) {
    case DType::kFloat32:
      return f(std::type_identity<float>{});
    case DType::kFloat64:
      return f(std::type_identity<double>{});
    case DType::kInt8:
      return f(std::type_identity<std::int8_t>{});
    case DType::kUInt8:
      return f(std::type_identity<std::uint8_t>{});
    case DType::kInt16:
      return f(std::type_identity<std::int16_t>{});
    case DType::kInt32:
      return f(std::type_identity<std::int32_t>{});
    case DType::kInt64:
      return f(std::type_identity<std::int64_t>{});
    case DType::kBool:
      return f(std::type_identity<bool>{});
    case DType::kFloat16:
      break;
  }
  throw Error("no native kernel computes on " + std::string(dtype_name(dtype)));
}

}  // namespace collage::native
