// Ops that write each output element from a position computed in the
// input: Expand, Tile and Pad (axis-offset copies, axis_copy.h, on every
// dtype by moving bytes), CumSum and Trilu.
#include <algorithm>
#include <cstring>

#include "collage/backends/native/axis_copy.h"
#include "collage/backends/native/broadcast.h"
#include "collage/backends/native/tensor_kernels.h"

namespace collage::native {
namespace {

using Tables = std::vector<std::vector<std::int64_t>>;

// --- Expand and Tile -------------------------------------------------------

void run_expand(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                std::span<Tensor> outputs, int threads) {
  const Shape& in = inputs[0].shape();
  const std::vector<std::int64_t> requested = read_ints(inputs[1]);
  Shape expected;
  try {
    expected = broadcast_shapes(in, Shape(requested.begin(), requested.end()));
  } catch (const Error& error) {
    throw node_error(node, error.message());
  }
  check_output_shape(node, outputs[0], expected);
  const std::vector<std::int64_t> strides = row_major_strides(in);
  const std::size_t skip = expected.size() - in.size();
  Tables tables(expected.size());
  for (std::size_t d = 0; d < expected.size(); ++d) {
    tables[d].assign(static_cast<std::size_t>(expected[d]), 0);
    // Dimensions the input lacks or has as 1 repeat (offset 0).
    if (d < skip || in[d - skip] == 1) continue;
    for (std::int64_t i = 0; i < expected[d]; ++i) {
      tables[d][static_cast<std::size_t>(i)] = i * strides[d - skip];
    }
  }
  axis_copy(inputs[0].raw(), outputs[0].raw(), dtype_size(inputs[0].dtype()), tables, nullptr,
            threads);
}

bool check_shape_input_op(const Graph& graph, const Node& node) {
  return node.inputs.size() == 2 && check_data_and_output(graph, node) &&
         input_is(graph, node, 1, {DType::kInt64});
}

void run_tile(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
              std::span<Tensor> outputs, int threads) {
  const Shape& in = inputs[0].shape();
  const std::vector<std::int64_t> repeats = read_ints(inputs[1]);
  if (repeats.size() != in.size()) throw node_error(node, "repeats must have one entry per axis");
  Shape expected(in.size());
  const std::vector<std::int64_t> strides = row_major_strides(in);
  // Output axis d of size repeats[d] * in[d] is walked as the pair
  // (repeat, position): the repeat contributes nothing, the position its stride.
  Tables tables;
  for (std::size_t d = 0; d < in.size(); ++d) {
    if (repeats[d] < 0) throw node_error(node, "negative repeat");
    expected[d] = in[d] * repeats[d];
    tables.emplace_back(static_cast<std::size_t>(repeats[d]), 0);
    std::vector<std::int64_t>& position = tables.emplace_back(static_cast<std::size_t>(in[d]));
    for (std::int64_t i = 0; i < in[d]; ++i) position[static_cast<std::size_t>(i)] = i * strides[d];
  }
  check_output_shape(node, outputs[0], expected);
  axis_copy(inputs[0].raw(), outputs[0].raw(), dtype_size(inputs[0].dtype()), tables, nullptr,
            threads);
}

// --- Pad -------------------------------------------------------------------

// Where output index `i` of a padded axis reads: i - before is inside the
// input, or mapped back inside by the mode, or kOutside for a constant.
std::int64_t pad_source(std::int64_t i, std::int64_t before, std::int64_t dim,
                        const std::string& mode, const Node& node) {
  std::int64_t source = i - before;
  if (source >= 0 && source < dim) return source;
  if (mode == "constant") return kOutside;
  if (dim == 0) throw node_error(node, "cannot pad an empty axis in " + mode + " mode");
  if (mode == "edge") return std::clamp<std::int64_t>(source, 0, dim - 1);
  // reflect: mirror around the edges without repeating them; the pattern has
  // period 2 * (dim - 1).
  if (dim == 1) return 0;
  const std::int64_t period = 2 * (dim - 1);
  source %= period;
  if (source < 0) source += period;
  return source < dim ? source : period - source;
}

void run_pad(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
             std::span<Tensor> outputs, int threads) {
  const Tensor& in = inputs[0];
  const Shape& shape = in.shape();
  const auto rank = static_cast<std::int64_t>(shape.size());
  const std::string mode = node.attributes.get_string("mode", "constant");
  const std::optional<std::vector<std::int64_t>> pads_given =
      ints_from_input_or_attribute(graph, node, inputs, 1, "pads", 11);
  if (!pads_given) throw node_error(node, "pads are missing");
  // Opset 18's axes input says which axes the pads are for; default all.
  std::vector<std::int64_t> axes;
  if (graph.opset >= 18 && inputs.size() > 3 && !inputs[3].empty()) {
    axes = read_ints(inputs[3]);
  } else {
    for (std::int64_t d = 0; d < rank; ++d) axes.push_back(d);
  }
  if (pads_given->size() != 2 * axes.size()) throw node_error(node, "pads has the wrong length");
  std::vector<std::int64_t> before(shape.size(), 0), after(shape.size(), 0);
  for (std::size_t i = 0; i < axes.size(); ++i) {
    const auto d = static_cast<std::size_t>(resolve_axis(axes[i], rank, node));
    before[d] = (*pads_given)[i];
    after[d] = (*pads_given)[i + axes.size()];
  }

  // The fill value, in the data's dtype.
  std::uint64_t fill = 0;
  if (graph.opset >= 11) {
    if (inputs.size() > 2 && !inputs[2].empty()) {
      if (inputs[2].numel() != 1) throw node_error(node, "constant_value must be a scalar");
      std::memcpy(&fill, inputs[2].raw(), dtype_size(in.dtype()));
    }
  } else {
    store_number(in.dtype(), node.attributes.get_float("value", 0.0f), &fill);
  }

  Shape expected(shape.size());
  const std::vector<std::int64_t> strides = row_major_strides(shape);
  Tables tables(shape.size());
  for (std::size_t d = 0; d < shape.size(); ++d) {
    expected[d] = shape[d] + before[d] + after[d];
    if (expected[d] < 0) throw node_error(node, "pads remove more than the axis holds");
    tables[d].resize(static_cast<std::size_t>(expected[d]));
    for (std::int64_t i = 0; i < expected[d]; ++i) {
      const std::int64_t source = pad_source(i, before[d], shape[d], mode, node);
      tables[d][static_cast<std::size_t>(i)] = source == kOutside ? kOutside : source * strides[d];
    }
  }
  check_output_shape(node, outputs[0], expected);
  axis_copy(in.raw(), outputs[0].raw(), dtype_size(in.dtype()), tables, &fill, threads);
}

bool check_pad(const Graph& graph, const Node& node) {
  if (!check_data_and_output(graph, node)) return false;
  const std::string mode = node.attributes.get_string("mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge") return false;
  if (graph.opset < 11) return node.inputs.size() == 1 && node.attributes.has("pads");
  if (!input_is(graph, node, 1, {DType::kInt64})) return false;
  if (node.input(2) != kNoValue && !input_is(graph, node, 2, {output_dtype(graph, node, 0)})) {
    return false;
  }
  return node.input(3) == kNoValue ||
         (graph.opset >= 18 && input_is(graph, node, 3, {DType::kInt64, DType::kInt32}));
}

// --- CumSum ----------------------------------------------------------------

template <typename T>
void cumsum_typed(const Tensor& in, Tensor& out, std::size_t axis, bool exclusive, bool reverse,
                  int threads) {
  const Shape& shape = in.shape();
  const std::int64_t outer = dims_product(shape, 0, axis);
  const std::int64_t length = shape[axis];
  const std::int64_t inner = dims_product(shape, axis + 1, shape.size());
  const T* x = in.data<T>();
  T* y = out.data<T>();
  const int team = threads_for(in.numel(), threads);
#pragma omp parallel for collapse(2) num_threads(team) schedule(static) if (team > 1)
  for (std::int64_t o = 0; o < outer; ++o) {
    for (std::int64_t i = 0; i < inner; ++i) {
      const std::int64_t base = o * length * inner + i;
      T sum = 0;
      for (std::int64_t step = 0; step < length; ++step) {
        const std::int64_t j = reverse ? length - 1 - step : step;
        const std::int64_t at = base + j * inner;
        if (exclusive) {
          y[at] = sum;
          sum += x[at];
        } else {
          sum += x[at];
          y[at] = sum;
        }
      }
    }
  }
}

void run_cumsum(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                std::span<Tensor> outputs, int threads) {
  const Tensor& in = inputs[0];
  if (inputs[1].numel() != 1) throw node_error(node, "axis must be a scalar");
  const auto axis = static_cast<std::size_t>(resolve_axis(inputs[1].int_at(0), in.rank(), node));
  check_output_shape(node, outputs[0], in.shape());
  const bool exclusive = node.attributes.get_int("exclusive", 0) != 0;
  const bool reverse = node.attributes.get_int("reverse", 0) != 0;
  visit_dtype(in.dtype(), [&](auto type) {
    using T = typename decltype(type)::type;
    if constexpr (!std::is_same_v<T, bool>) {
      cumsum_typed<T>(in, outputs[0], axis, exclusive, reverse, threads);
    }
  });
}

bool check_cumsum(const Graph& graph, const Node& node) {
  return node.inputs.size() == 2 && check_data_and_output(graph, node) &&
         input_is(graph, node, 0,
                  {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64}) &&
         input_is(graph, node, 1, {DType::kInt32, DType::kInt64});
}

// --- Trilu --------------------------------------------------------------------

// Trilu keeps the upper (column - row >= k) or the lower (column - row <= k)
// triangle of every matrix of the last two axes and zeroes the rest. Zero
// bytes are zero in every dtype, so the kernel copies and clears bytes.
void run_trilu(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
               std::span<Tensor> outputs, int threads) {
  (void)graph;
  (void)threads;
  const Shape& shape = inputs[0].shape();
  if (shape.size() < 2) throw node_error(node, "the input must have rank 2 or more");
  check_output_shape(node, outputs[0], shape);
  std::int64_t k = 0;
  if (inputs.size() > 1 && !inputs[1].empty()) {
    if (inputs[1].numel() != 1) throw node_error(node, "k must hold one value");
    k = inputs[1].int_at(0);
  }
  const bool upper = node.attributes.get_int("upper", 1) != 0;
  const std::int64_t rows = shape[shape.size() - 2], cols = shape.back();
  const std::int64_t lines = dims_product(shape, 0, shape.size() - 1);
  const std::size_t size = dtype_size(inputs[0].dtype());
  std::memcpy(outputs[0].raw(), inputs[0].raw(), inputs[0].byte_size());
  auto* out = static_cast<std::byte*>(outputs[0].raw());
  for (std::int64_t line = 0; line < lines; ++line) {
    const std::int64_t row = line % rows;
    // Columns [first, last) are cleared; the bounds are clamped to the row
    // so that a k past either corner clears everything or nothing.
    const std::int64_t first = upper ? 0 : std::clamp<std::int64_t>(row + k + 1, 0, cols);
    const std::int64_t last = upper ? std::clamp<std::int64_t>(row + k, 0, cols) : cols;
    if (last > first) {
      std::memset(out + (line * cols + first) * static_cast<std::int64_t>(size), 0,
                  static_cast<std::size_t>(last - first) * size);
    }
  }
}

bool check_trilu(const Graph& graph, const Node& node) {
  if (node.inputs.empty() || node.inputs.size() > 2 || !check_data_and_output(graph, node)) {
    return false;
  }
  if (node.input(1) != kNoValue && !input_is(graph, node, 1, {DType::kInt64})) return false;
  return graph.type(node.inputs[0]).rank() >= 2;
}

constexpr OpEntry kExpandOps[] = {
    {"Expand", run_expand, check_shape_input_op},
    {"Tile", run_tile, check_shape_input_op},
    {"Pad", run_pad, check_pad},
    {"CumSum", run_cumsum, check_cumsum},
    {"Trilu", run_trilu, check_trilu},
};

}  // namespace

std::span<const OpEntry> expand_ops() { return kExpandOps; }

}  // namespace collage::native
