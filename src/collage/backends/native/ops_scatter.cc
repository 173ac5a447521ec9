// Ops that write by index: Scatter, ScatterElements, ScatterND, MaxUnpool,
// OneHot, EyeLike and ReverseSequence.
//
// The scatters copy `data` to the output and then write `updates` where
// `indices` point, in index order, so that a later index wins a repeated
// position (ONNX leaves that case undefined without a reduction; this is what
// its reference does). A reduction (opset 16: add, mul; opset 18: max, min)
// combines the update with what the output holds instead.
#include <algorithm>
#include <cstring>
#include <optional>
#include <string>

#include "collage/backends/native/broadcast.h"
#include "collage/backends/native/tensor_kernels.h"

namespace collage::native {
namespace {

enum class Reduction { kNone, kAdd, kMul, kMax, kMin };

std::optional<Reduction> reduction_of(const Node& node) {
  const std::string name = node.attributes.get_string("reduction", "none");
  if (name == "none") return Reduction::kNone;
  if (name == "add") return Reduction::kAdd;
  if (name == "mul") return Reduction::kMul;
  if (name == "max") return Reduction::kMax;
  if (name == "min") return Reduction::kMin;
  return std::nullopt;
}

template <typename T>
void combine(T* destination, const T* source, std::int64_t count, Reduction reduction) {
  for (std::int64_t i = 0; i < count; ++i) {
    switch (reduction) {
      case Reduction::kNone:
        destination[i] = source[i];
        break;
      case Reduction::kAdd:
        destination[i] = static_cast<T>(destination[i] + source[i]);
        break;
      case Reduction::kMul:
        destination[i] = static_cast<T>(destination[i] * source[i]);
        break;
      case Reduction::kMax:
        destination[i] = std::max(destination[i], source[i]);
        break;
      case Reduction::kMin:
        destination[i] = std::min(destination[i], source[i]);
        break;
    }
  }
}

// Slice t of `updates` (`slice` elements, contiguous) combined into `out`
// at element offset offsets[t], in order. Dispatches on the type once; a
// plain write moves bytes (float16 among them).
void scatter_slices(Tensor& out, const Tensor& updates, const std::vector<std::int64_t>& offsets,
                    std::int64_t slice, Reduction reduction) {
  if (reduction == Reduction::kNone) {
    const std::size_t element = dtype_size(out.dtype());
    const std::size_t bytes = static_cast<std::size_t>(slice) * element;
    auto* destination = static_cast<unsigned char*>(out.raw());
    const auto* source = static_cast<const unsigned char*>(updates.raw());
    for (std::size_t t = 0; t < offsets.size(); ++t) {
      std::memcpy(destination + static_cast<std::size_t>(offsets[t]) * element, source + t * bytes,
                  bytes);
    }
    return;
  }
  visit_dtype(out.dtype(), [&]<typename T>(std::type_identity<T>) {
    T* destination = out.data<T>();
    const T* source = updates.data<T>();
    for (std::size_t t = 0; t < offsets.size(); ++t) {
      combine(destination + offsets[t], source + static_cast<std::int64_t>(t) * slice, slice,
              reduction);
    }
  });
}

bool check_scatter(const Graph& graph, const Node& node, bool reduction_allowed) {
  if (node.inputs.size() != 3 || node.outputs.size() != 1) return false;
  const std::optional<DType> dtype = input_dtype(graph, node, 0);
  if (!dtype || input_dtype(graph, node, 2) != dtype || output_dtype(graph, node, 0) != *dtype) {
    return false;
  }
  if (!input_is(graph, node, 1, {DType::kInt32, DType::kInt64})) return false;
  const std::optional<Reduction> reduction = reduction_of(node);
  if (!reduction) return false;
  if (*reduction == Reduction::kNone) return *dtype != DType::kFloat16;
  return reduction_allowed && !is_one_of(*dtype, {DType::kFloat16, DType::kBool});
}

// --- Scatter and ScatterElements ------------------------------------------

void run_scatter_elements(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                          std::span<Tensor> outputs, int threads) {
  const Tensor& data = inputs[0];
  const Tensor& indices = inputs[1];
  const Tensor& updates = inputs[2];
  Tensor& out = outputs[0];
  const std::int64_t rank = data.rank();
  const auto axis =
      static_cast<std::size_t>(resolve_axis(node.attributes.get_int("axis", 0), rank, node));
  if (indices.shape() != updates.shape()) {
    throw node_error(node, "indices " + shape_to_string(indices.shape()) + " and updates " +
                               shape_to_string(updates.shape()) + " differ in shape");
  }
  const std::vector<std::int64_t> offsets = offsets_along_axis(node, data.shape(), indices, axis);
  check_output_shape(node, out, data.shape());
  std::memcpy(out.raw(), data.raw(), data.byte_size());

  scatter_slices(out, updates, offsets, 1, *reduction_of(node));
}

// --- ScatterND -------------------------------------------------------------

// Each index tuple (the last axis of `indices`, of length k) names a slice
// data[tuple, ...] of data.shape[k:], replaced by (or combined with) the
// matching slice of `updates`, whose shape is indices.shape[:-1] +
// data.shape[k:].
void run_scatter_nd(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                    std::span<Tensor> outputs, int threads) {
  const Tensor& data = inputs[0];
  const Tensor& indices = inputs[1];
  const Tensor& updates = inputs[2];
  Tensor& out = outputs[0];
  const Shape& shape = data.shape();
  const Shape& index_shape = indices.shape();
  if (index_shape.empty()) throw node_error(node, "indices must have rank 1 or more");
  const std::int64_t k = index_shape.back();
  if (k < 1 || k > data.rank()) {
    throw node_error(node, "index tuples of length " + std::to_string(k) +
                               " do not fit data of rank " + std::to_string(data.rank()));
  }
  Shape expected(index_shape.begin(), index_shape.end() - 1);
  expected.insert(expected.end(), shape.begin() + k, shape.end());
  if (updates.shape() != expected) {
    throw node_error(node, "updates have shape " + shape_to_string(updates.shape()) +
                               " where the indices ask for " + shape_to_string(expected));
  }
  check_output_shape(node, out, shape);
  std::memcpy(out.raw(), data.raw(), data.byte_size());

  const std::vector<std::int64_t> strides = row_major_strides(shape);
  std::vector<std::int64_t> offsets(static_cast<std::size_t>(indices.numel() / k));
  for (std::size_t t = 0; t < offsets.size(); ++t) {
    for (std::int64_t j = 0; j < k; ++j) {
      const auto axis = static_cast<std::size_t>(j);
      const std::int64_t index = indices.int_at(static_cast<std::int64_t>(t) * k + j);
      offsets[t] += wrap_index(index, shape[axis], node) * strides[axis];
    }
  }
  // Elements per slice, data.shape[k:]: the stride of the last tuple axis.
  const std::int64_t slice = strides[static_cast<std::size_t>(k) - 1];
  scatter_slices(out, updates, offsets, slice, *reduction_of(node));
}

bool check_scatter_nd(const Graph& graph, const Node& node) {
  return check_scatter(graph, node, true) && input_is(graph, node, 1, {DType::kInt64});
}

// --- MaxUnpool -------------------------------------------------------------

// MaxPool undone: each element of X goes to the flat index its element of I
// gives, as MaxPool's Indices output gives them: in the shape the pool's
// input had, which the attributes give ((in - 1) * stride + kernel - pads).
// An output_shape larger than that adds zeros at the end of each axis.
void run_max_unpool(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                    std::span<Tensor> outputs, int threads) {
  const Tensor& x = inputs[0];
  const Tensor& indices = inputs[1];
  Tensor& out = outputs[0];
  if (indices.shape() != x.shape()) throw node_error(node, "X and I differ in shape");
  const std::size_t spatial = x.shape().size() - 2;
  const std::vector<std::int64_t> kernel = node.attributes.get_ints("kernel_shape");
  const std::vector<std::int64_t> strides =
      node.attributes.get_ints("strides", std::vector<std::int64_t>(spatial, 1));
  const std::vector<std::int64_t> pads =
      node.attributes.get_ints("pads", std::vector<std::int64_t>(2 * spatial, 0));
  if (kernel.size() != spatial || strides.size() != spatial || pads.size() != 2 * spatial) {
    throw node_error(node, "kernel_shape, strides and pads do not fit X's rank");
  }
  Shape pooled{x.shape()[0], x.shape()[1]};
  for (std::size_t i = 0; i < spatial; ++i) {
    pooled.push_back((x.shape()[2 + i] - 1) * strides[i] + kernel[i] - pads[i] - pads[i + spatial]);
  }
  bool fits = out.rank() == x.rank();
  for (std::size_t d = 0; fits && d < pooled.size(); ++d) {
    fits = d < 2 ? out.shape()[d] == pooled[d] : out.shape()[d] >= pooled[d];
  }
  if (!fits) {
    throw node_error(node, "the output " + shape_to_string(out.shape()) +
                               " cannot hold the pooled input " + shape_to_string(pooled));
  }
  const std::int64_t pooled_count = TensorType{x.dtype(), pooled}.numel();
  const std::vector<std::int64_t> from = row_major_strides(pooled);
  const std::vector<std::int64_t> to = row_major_strides(out.shape());
  const std::size_t element = dtype_size(x.dtype());
  auto* destination = static_cast<unsigned char*>(out.raw());
  const auto* source = static_cast<const unsigned char*>(x.raw());
  std::memset(destination, 0, out.byte_size());
  for (std::int64_t i = 0; i < x.numel(); ++i) {
    std::int64_t at = indices.int_at(i);
    if (at < 0 || at >= pooled_count) {
      throw node_error(node, "index " + std::to_string(at) + " is outside the pooled input " +
                                 shape_to_string(pooled));
    }
    std::int64_t offset = 0;
    for (std::size_t d = 0; d < pooled.size(); ++d) {
      offset += at / from[d] * to[d];
      at %= from[d];
    }
    std::memcpy(destination + static_cast<std::size_t>(offset) * element,
                source + static_cast<std::size_t>(i) * element, element);
  }
}

bool check_max_unpool(const Graph& graph, const Node& node) {
  if (node.inputs.size() < 2 || node.inputs.size() > 3 || node.outputs.size() != 1) return false;
  const std::optional<DType> dtype = input_dtype(graph, node, 0);
  return dtype && output_dtype(graph, node, 0) == *dtype &&
         input_is(graph, node, 1, {DType::kInt64}) && graph.type(node.inputs[0]).rank() >= 3 &&
         graph.type(node.outputs[0]).rank() == graph.type(node.inputs[0]).rank() &&
         node.attributes.has("kernel_shape");
}

// --- OneHot ----------------------------------------------------------------

// output[..., j, ...] (j on `axis`) = values[1] where j is the index at that
// position (negative indices count back from depth), values[0] elsewhere; an
// index outside [-depth, depth) gives a row of values[0].
void run_one_hot(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                 std::span<Tensor> outputs, int threads) {
  const Tensor& indices = inputs[0];
  const Tensor& values = inputs[2];
  Tensor& out = outputs[0];
  if (inputs[1].numel() != 1) throw node_error(node, "depth must hold one value");
  if (values.numel() != 2) throw node_error(node, "values must hold two values: off, on");
  const auto depth = static_cast<std::int64_t>(inputs[1].number_at(0));
  if (depth < 1) throw node_error(node, "depth must be positive, not " + std::to_string(depth));
  const std::int64_t rank = indices.rank() + 1;
  const auto axis =
      static_cast<std::size_t>(resolve_axis(node.attributes.get_int("axis", -1), rank, node));
  Shape expected = indices.shape();
  expected.insert(expected.begin() + static_cast<std::ptrdiff_t>(axis), depth);
  check_output_shape(node, out, expected);

  const std::size_t element = dtype_size(values.dtype());
  const auto* off = static_cast<const unsigned char*>(values.raw());
  const unsigned char* on = off + element;
  auto* destination = static_cast<unsigned char*>(out.raw());
  std::int64_t outer = 1;
  for (std::size_t d = 0; d < axis; ++d) outer *= indices.shape()[d];
  const std::int64_t inner = outer == 0 ? 0 : indices.numel() / outer;
  for (std::int64_t i = 0; i < out.numel(); ++i) {
    std::memcpy(destination + static_cast<std::size_t>(i) * element, off, element);
  }
  for (std::int64_t o = 0; o < outer; ++o) {
    for (std::int64_t n = 0; n < inner; ++n) {
      const double raw = indices.number_at(o * inner + n);
      auto index = static_cast<std::int64_t>(raw);
      if (index < 0) index += depth;
      if (index < 0 || index >= depth) continue;
      const std::int64_t at = (o * depth + index) * inner + n;
      std::memcpy(destination + static_cast<std::size_t>(at) * element, on, element);
    }
  }
}

bool check_one_hot(const Graph& graph, const Node& node) {
  if (node.inputs.size() != 3 || node.outputs.size() != 1) return false;
  const std::optional<DType> values = input_dtype(graph, node, 2);
  if (!values || output_dtype(graph, node, 0) != *values) return false;
  for (std::size_t i = 0; i < 2; ++i) {
    const std::optional<DType> dtype = input_dtype(graph, node, i);
    if (!dtype || is_one_of(*dtype, {DType::kBool, DType::kFloat16})) return false;
  }
  return true;
}

// --- EyeLike ---------------------------------------------------------------

void run_eye_like(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                  std::span<Tensor> outputs, int threads) {
  Tensor& out = outputs[0];
  if (out.rank() != 2) throw node_error(node, "the input must be a matrix");
  check_output_shape(node, out, inputs[0].shape());
  const std::int64_t rows = out.shape()[0];
  const std::int64_t cols = out.shape()[1];
  const std::int64_t k = node.attributes.get_int("k", 0);
  const std::size_t element = dtype_size(out.dtype());
  auto* destination = static_cast<unsigned char*>(out.raw());
  std::memset(destination, 0, out.byte_size());
  for (std::int64_t row = std::max<std::int64_t>(0, -k); row < rows && row + k < cols; ++row) {
    store_number(out.dtype(), 1.0,
                 destination + static_cast<std::size_t>(row * cols + row + k) * element);
  }
}

bool check_eye_like(const Graph& graph, const Node& node) {
  if (node.inputs.size() != 1 || node.outputs.size() != 1) return false;
  const std::optional<DType> input = input_dtype(graph, node, 0);
  return input && graph.type(node.inputs[0]).rank() == 2 &&
         output_dtype(graph, node, 0) != DType::kFloat16;
}

// --- ReverseSequence -------------------------------------------------------

// For each batch entry b, the first sequence_lens[b] steps along the time
// axis in reverse order, the rest as they are. The time and batch axes are
// 0 and 1, in either order.
void run_reverse_sequence(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                          std::span<Tensor> outputs, int threads) {
  const Tensor& x = inputs[0];
  const Tensor& lengths = inputs[1];
  Tensor& out = outputs[0];
  const std::int64_t time_axis = node.attributes.get_int("time_axis", 0);
  const std::int64_t batch_axis = node.attributes.get_int("batch_axis", 1);
  if (x.rank() < 2) throw node_error(node, "the input must have rank 2 or more");
  check_output_shape(node, out, x.shape());
  const std::int64_t steps = x.shape()[static_cast<std::size_t>(time_axis)];
  const std::int64_t batch = x.shape()[static_cast<std::size_t>(batch_axis)];
  if (lengths.numel() != batch) {
    throw node_error(node, "sequence_lens has " + std::to_string(lengths.numel()) +
                               " entries for a batch of " + std::to_string(batch));
  }
  std::int64_t inner = 1;
  for (std::size_t d = 2; d < x.shape().size(); ++d) inner *= x.shape()[d];
  const std::size_t block = static_cast<std::size_t>(inner) * dtype_size(x.dtype());
  const auto* source = static_cast<const unsigned char*>(x.raw());
  auto* destination = static_cast<unsigned char*>(out.raw());
  for (std::int64_t b = 0; b < batch; ++b) {
    const std::int64_t length = lengths.int_at(b);
    if (length < 0 || length > steps) {
      throw node_error(node, "sequence length " + std::to_string(length) + " is outside [0, " +
                                 std::to_string(steps) + "]");
    }
    for (std::int64_t t = 0; t < steps; ++t) {
      const std::int64_t from = t < length ? length - 1 - t : t;
      const auto at = [&](std::int64_t step) {
        const std::int64_t flat = time_axis == 0 ? step * batch + b : b * steps + step;
        return static_cast<std::size_t>(flat) * block;
      };
      std::memcpy(destination + at(t), source + at(from), block);
    }
  }
}

bool check_reverse_sequence(const Graph& graph, const Node& node) {
  if (node.inputs.size() != 2 || node.outputs.size() != 1) return false;
  const std::optional<DType> dtype = input_dtype(graph, node, 0);
  if (!dtype || output_dtype(graph, node, 0) != *dtype) return false;
  const std::int64_t time_axis = node.attributes.get_int("time_axis", 0);
  const std::int64_t batch_axis = node.attributes.get_int("batch_axis", 1);
  return input_is(graph, node, 1, {DType::kInt64}) && graph.type(node.inputs[0]).rank() >= 2 &&
         ((time_axis == 0 && batch_axis == 1) || (time_axis == 1 && batch_axis == 0));
}

constexpr OpEntry kScatterOps[] = {
    {"Scatter", run_scatter_elements,
     [](const Graph& graph, const Node& node) { return check_scatter(graph, node, false); }},
    {"ScatterElements", run_scatter_elements,
     [](const Graph& graph, const Node& node) { return check_scatter(graph, node, true); }},
    {"ScatterND", run_scatter_nd, check_scatter_nd},
    {"MaxUnpool", run_max_unpool, check_max_unpool},
    {"OneHot", run_one_hot, check_one_hot},
    {"EyeLike", run_eye_like, check_eye_like},
    {"ReverseSequence", run_reverse_sequence, check_reverse_sequence},
};

}  // namespace

std::span<const OpEntry> scatter_ops() { return kScatterOps; }

}  // namespace collage::native
