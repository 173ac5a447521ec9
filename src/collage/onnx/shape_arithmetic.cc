#include "collage/onnx/shape_arithmetic.h"

#include <cassert>
#include <cmath>
#include <cstring>
#include <string>
#include <type_traits>

#include "collage/ir/error.h"

namespace collage {
namespace {

bool is_mod_type(DType dtype) {
  return dtype == DType::kInt32 || dtype == DType::kInt64 || dtype == DType::kFloat32 ||
         dtype == DType::kFloat64;
}

// The element of `input` that numpy-style broadcasting pairs with element
// `index` of a tensor of shape `out`.
std::int64_t broadcast_index(const Shape& out, const Shape& input, std::int64_t index) {
  std::int64_t offset = 0;
  std::int64_t stride = 1;
  const std::size_t lead = out.size() - input.size();
  for (std::size_t d = out.size(); d-- > 0;) {
    const std::int64_t coordinate = index % out[d];
    index /= out[d];
    if (d < lead) continue;
    const std::int64_t extent = input[d - lead];
    if (extent != 1) offset += coordinate * stride;
    stride *= extent;
  }
  return offset;
}

// Integer Mod takes the divisor's sign (Python's %) unless fmod asks for C's.
template <typename T>
T mod(T a, T b, bool fmod, const Node& node) {
  if constexpr (std::is_floating_point_v<T>) {
    T r = std::fmod(a, b);
    if (!fmod && r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
  } else {
    if (b == 0) throw Error("Mod by zero", {.node = node.name});
    T r = a % b;
    if (!fmod && r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
  }
}

template <typename T>
void mod_into(const Node& node, const Tensor& a, const Tensor& b, Tensor& out) {
  const bool fmod = node.attributes.get_int("fmod", 0) != 0;
  const T* x = a.data<T>();
  const T* y = b.data<T>();
  T* z = out.data<T>();
  for (std::int64_t i = 0; i < out.numel(); ++i) {
    z[i] = mod(x[broadcast_index(out.shape(), a.shape(), i)],
               y[broadcast_index(out.shape(), b.shape(), i)], fmod, node);
  }
}

Tensor evaluate_mod(const Node& node, const Tensor& a, const Tensor& b, TensorType type) {
  Tensor out = Tensor::allocate(std::move(type));
  switch (out.dtype()) {
    case DType::kInt32:
      mod_into<std::int32_t>(node, a, b, out);
      break;
    case DType::kInt64:
      mod_into<std::int64_t>(node, a, b, out);
      break;
    case DType::kFloat32:
      mod_into<float>(node, a, b, out);
      break;
    case DType::kFloat64:
      mod_into<double>(node, a, b, out);
      break;
    default:
      throw Error("Mod of " + std::string(dtype_name(out.dtype())), {.node = node.name});
  }
  return out;
}

// ScatterND without reduction: data with the slices `indices` name replaced
// by `updates`, in order (a later update of the same slice wins).
Tensor evaluate_scatter_nd(const Node& node, const Tensor& data, const Tensor& indices,
                           const Tensor& updates) {
  Tensor out = data.clone();
  const std::int64_t depth = indices.shape().empty() ? 0 : indices.shape().back();
  if (depth > data.rank()) {
    throw Error("ScatterND indices are deeper than the data's rank", {.node = node.name});
  }
  std::int64_t slice = 1;
  for (std::int64_t d = depth; d < data.rank(); ++d) slice *= data.shape()[d];
  const std::size_t element = dtype_size(data.dtype());
  const std::int64_t count = depth == 0 ? 1 : indices.numel() / depth;
  if (updates.numel() != count * slice) {
    throw Error("ScatterND updates do not match its indices", {.node = node.name});
  }
  for (std::int64_t u = 0; u < count; ++u) {
    std::int64_t offset = 0;
    for (std::int64_t d = 0; d < depth; ++d) {
      const std::int64_t extent = data.shape()[d];
      std::int64_t index = indices.int_at(u * depth + d);
      if (index < 0) index += extent;
      if (index < 0 || index >= extent) {
        throw Error("ScatterND index out of range", {.node = node.name});
      }
      offset = offset * extent + index;
    }
    std::memcpy(static_cast<char*>(out.raw()) + offset * slice * element,
                static_cast<const char*>(updates.raw()) + u * slice * element, slice * element);
  }
  return out;
}

// ScatterElements without reduction: data with the elements `indices` name
// along `axis` replaced by the matching `updates`.
Tensor evaluate_scatter_elements(const Node& node, const Tensor& data, const Tensor& indices,
                                 const Tensor& updates) {
  if (indices.shape() != updates.shape() || indices.rank() != data.rank()) {
    throw Error("ScatterElements indices, updates and data do not match", {.node = node.name});
  }
  const std::int64_t rank = data.rank();
  std::int64_t axis = node.attributes.get_int("axis", 0);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank)
    throw Error("ScatterElements axis out of range", {.node = node.name});
  Tensor out = data.clone();
  const std::size_t element = dtype_size(data.dtype());
  for (std::int64_t i = 0; i < indices.numel(); ++i) {
    std::int64_t offset = 0;
    std::int64_t rest = i;
    std::int64_t stride = 1;
    for (std::int64_t d = rank; d-- > 0;) {
      const std::int64_t extent = data.shape()[d];
      std::int64_t coordinate = rest % indices.shape()[d];
      rest /= indices.shape()[d];
      if (d == axis) {
        coordinate = indices.int_at(i);
        if (coordinate < 0) coordinate += extent;
        if (coordinate < 0 || coordinate >= extent) {
          throw Error("ScatterElements index out of range", {.node = node.name});
        }
      }
      offset += coordinate * stride;
      stride *= extent;
    }
    std::memcpy(static_cast<char*>(out.raw()) + offset * element,
                static_cast<const char*>(updates.raw()) + i * element, element);
  }
  return out;
}

bool is_own_op(const Graph& graph, const Node& node) {
  if (!node.domain.empty() || node.outputs.size() != 1) return false;
  if (node.op_type == "Mod") {
    return node.inputs.size() == 2 && node.input(0) != kNoValue && node.input(1) != kNoValue &&
           is_mod_type(graph.type(node.outputs[0]).dtype);
  }
  if (node.op_type == "ScatterND" || node.op_type == "ScatterElements") {
    return node.inputs.size() == 3 && node.input(1) != kNoValue &&
           graph.type(node.input(1)).dtype == DType::kInt64 &&
           node.attributes.get_string("reduction", "none") == "none";
  }
  return false;
}

}  // namespace

bool ShapeArithmeticEvaluator::can_evaluate(const Graph& graph, const Node& node) const {
  if (kernels_ != nullptr && kernels_->can_evaluate(graph, node)) return true;
  return is_own_op(graph, node);
}

std::vector<Tensor> ShapeArithmeticEvaluator::evaluate(const Graph& graph, const Node& node,
                                                       std::span<const Tensor> inputs) const {
  if (kernels_ != nullptr && kernels_->can_evaluate(graph, node)) {
    return kernels_->evaluate(graph, node, inputs);
  }
  assert(is_own_op(graph, node) && "evaluate() called for a node can_evaluate() refuses");
  if (node.op_type == "Mod") {
    return {evaluate_mod(node, inputs[0], inputs[1], graph.type(node.outputs[0]))};
  }
  if (node.op_type == "ScatterElements") {
    return {evaluate_scatter_elements(node, inputs[0], inputs[1], inputs[2])};
  }
  return {evaluate_scatter_nd(node, inputs[0], inputs[1], inputs[2])};
}

}  // namespace collage
