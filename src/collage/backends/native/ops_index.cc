// Data movement and indexing ops: Transpose, DepthToSpace, SpaceToDepth,
// Concat, Split, Slice, Gather, GatherElements and GatherND.
//
// They move elements without looking at them, so they work on every dtype
// by moving bytes. Transpose, the block ops and Slice are axis-offset copies
// (axis_copy.h); Concat, Split and Gather copy contiguous blocks.
#include <algorithm>
#include <cstring>

#include "collage/backends/native/axis_copy.h"
#include "collage/backends/native/broadcast.h"
#include "collage/backends/native/tensor_kernels.h"
#include "collage/backends/native/transpose.h"

namespace collage::native {
namespace {

using Tables = std::vector<std::vector<std::int64_t>>;

// --- Transpose -------------------------------------------------------------

void run_transpose(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                   std::span<Tensor> outputs, int threads) {
  const Shape& in = inputs[0].shape();
  const auto rank = static_cast<std::int64_t>(in.size());
  std::vector<std::int64_t> perm(in.size());
  // Without perm, the axes are reversed.
  for (std::int64_t d = 0; d < rank; ++d) perm[static_cast<std::size_t>(d)] = rank - 1 - d;
  perm = node.attributes.get_ints("perm", perm);
  if (static_cast<std::int64_t>(perm.size()) != rank)
    throw node_error(node, "perm has the wrong length");
  std::vector<bool> seen(in.size(), false);
  std::vector<std::size_t> axes;
  Shape shape;
  for (std::int64_t axis : perm) {
    const auto source = static_cast<std::size_t>(resolve_axis(axis, rank, node));
    if (seen[source]) throw node_error(node, "perm repeats an axis");
    seen[source] = true;
    axes.push_back(source);
    shape.push_back(in[source]);
  }
  check_output_shape(node, outputs[0], shape);
  transpose(inputs[0].raw(), outputs[0].raw(), dtype_size(inputs[0].dtype()), in, axes, threads);
}

// --- DepthToSpace and SpaceToDepth -------------------------------------------

// Both are a transpose of a 6-D view of the input whose result, read
// row-major, is the output (ONNX's definitions):
//   DepthToSpace DCR: [N, b, b, C/b², H, W] by [0, 3, 4, 1, 5, 2];
//   DepthToSpace CRD: [N, C/b², b, b, H, W] by [0, 1, 4, 2, 5, 3];
//   SpaceToDepth:     [N, C, H/b, b, W/b, b] by [0, 3, 5, 1, 2, 4].
void run_block_op(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                  std::span<Tensor> outputs, int threads) {
  const Shape& in = inputs[0].shape();
  if (in.size() != 4) throw node_error(node, "the input must have rank 4");
  const std::int64_t b = node.attributes.get_int("blocksize");
  if (b < 1) throw node_error(node, "blocksize must be at least 1");
  const std::int64_t n = in[0], c = in[1], h = in[2], w = in[3];
  Shape view;
  std::vector<std::size_t> perm;
  Shape out;
  if (node.op_type == "DepthToSpace") {
    if (c % (b * b) != 0) throw node_error(node, "the channels are not a multiple of blocksize²");
    const std::string mode = node.attributes.get_string("mode", "DCR");
    if (mode == "DCR") {
      view = {n, b, b, c / (b * b), h, w};
      perm = {0, 3, 4, 1, 5, 2};
    } else if (mode == "CRD") {
      view = {n, c / (b * b), b, b, h, w};
      perm = {0, 1, 4, 2, 5, 3};
    } else {
      throw node_error(node, "mode must be DCR or CRD, not '" + mode + "'");
    }
    out = {n, c / (b * b), h * b, w * b};
  } else {
    if (h % b != 0 || w % b != 0) {
      throw node_error(node, "the height and width are not multiples of blocksize");
    }
    view = {n, c, h / b, b, w / b, b};
    perm = {0, 3, 5, 1, 2, 4};
    out = {n, c * b * b, h / b, w / b};
  }
  check_output_shape(node, outputs[0], out);
  transpose(inputs[0].raw(), outputs[0].raw(), dtype_size(inputs[0].dtype()), view, perm, threads);
}

bool check_block_op(const Graph& graph, const Node& node) {
  if (node.inputs.size() != 1 || !check_data_and_output(graph, node)) return false;
  if (!node.attributes.has("blocksize")) return false;
  return graph.type(node.inputs[0]).rank() == 4;
}

// --- Concat and Split ------------------------------------------------------

void run_concat(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                std::span<Tensor> outputs, int threads) {
  Tensor& out = outputs[0];
  const auto rank = static_cast<std::int64_t>(out.rank());
  const auto axis =
      static_cast<std::size_t>(resolve_axis(node.attributes.get_int("axis"), rank, node));
  Shape expected = inputs[0].shape();
  if (expected.size() != out.shape().size())
    throw node_error(node, "input rank differs from output");
  expected[axis] = 0;
  for (const Tensor& input : inputs) {
    Shape shape = input.shape();
    if (shape.size() != expected.size()) throw node_error(node, "inputs differ in rank");
    expected[axis] += shape[axis];
    shape[axis] = expected[axis];
    if (shape != expected) throw node_error(node, "inputs differ outside the concat axis");
  }
  check_output_shape(node, out, expected);
  const std::size_t element = dtype_size(out.dtype());
  const std::int64_t outer = dims_product(expected, 0, axis);
  const std::size_t out_row =
      static_cast<std::size_t>(dims_product(expected, axis, expected.size())) * element;
  auto* destination = static_cast<unsigned char*>(out.raw());
  std::size_t column = 0;
  for (const Tensor& input : inputs) {
    const std::size_t block =
        static_cast<std::size_t>(dims_product(input.shape(), axis, input.shape().size())) * element;
    const auto* source = static_cast<const unsigned char*>(input.raw());
    const int team = threads_for(input.numel(), threads);
#pragma omp parallel for num_threads(team) schedule(static) if (team > 1)
    for (std::int64_t o = 0; o < outer; ++o) {
      std::memcpy(destination + static_cast<std::size_t>(o) * out_row + column,
                  source + static_cast<std::size_t>(o) * block, block);
    }
    column += block;
  }
}

bool check_concat(const Graph& graph, const Node& node) {
  if (node.inputs.empty() || !node.attributes.has("axis")) return false;
  const DType dtype = output_dtype(graph, node, 0);
  if (dtype_size(dtype) > 8) return false;
  for (std::size_t i = 0; i < node.inputs.size(); ++i) {
    if (!input_is(graph, node, i, {dtype})) return false;
  }
  return true;
}

void run_split(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
               std::span<Tensor> outputs, int threads) {
  const Tensor& in = inputs[0];
  const Shape& shape = in.shape();
  const auto axis =
      static_cast<std::size_t>(resolve_axis(node.attributes.get_int("axis", 0), in.rank(), node));
  // The static output types fix the pieces; an explicit split must agree.
  const std::optional<std::vector<std::int64_t>> split =
      ints_from_input_or_attribute(graph, node, inputs, 1, "split", 13);
  if (split && split->size() != outputs.size())
    throw node_error(node, "split has the wrong length");
  std::int64_t total = 0;
  for (std::size_t k = 0; k < outputs.size(); ++k) {
    Shape expected = shape;
    expected[axis] = outputs[k].shape().size() == shape.size() ? outputs[k].shape()[axis] : -1;
    if (split) expected[axis] = (*split)[k];
    check_output_shape(node, outputs[k], expected);
    total += expected[axis];
  }
  if (total != shape[axis]) throw node_error(node, "the pieces do not add up to the axis");
  if (!split) {
    // Without split, pieces are equal (the last one smaller when the axis
    // does not divide, as num_outputs allows).
    const auto count = static_cast<std::int64_t>(outputs.size());
    const std::int64_t piece = (shape[axis] + count - 1) / count;
    for (std::size_t k = 0; k < outputs.size(); ++k) {
      const std::int64_t want = std::min(piece, shape[axis] - piece * static_cast<std::int64_t>(k));
      if (outputs[k].shape()[axis] != want) throw node_error(node, "pieces are not equal");
    }
  }
  const std::size_t element = dtype_size(in.dtype());
  const std::int64_t outer = dims_product(shape, 0, axis);
  const std::size_t in_row =
      static_cast<std::size_t>(dims_product(shape, axis, shape.size())) * element;
  const auto* source = static_cast<const unsigned char*>(in.raw());
  std::size_t column = 0;
  for (Tensor& out : outputs) {
    const std::size_t block =
        static_cast<std::size_t>(dims_product(out.shape(), axis, shape.size())) * element;
    auto* destination = static_cast<unsigned char*>(out.raw());
    const int team = threads_for(out.numel(), threads);
#pragma omp parallel for num_threads(team) schedule(static) if (team > 1)
    for (std::int64_t o = 0; o < outer; ++o) {
      std::memcpy(destination + static_cast<std::size_t>(o) * block,
                  source + static_cast<std::size_t>(o) * in_row + column, block);
    }
    column += block;
  }
}

bool check_split(const Graph& graph, const Node& node) {
  if (!check_data_and_output(graph, node)) return false;
  for (std::size_t k = 0; k < node.outputs.size(); ++k) {
    if (output_dtype(graph, node, k) != output_dtype(graph, node, 0)) return false;
  }
  if (graph.opset >= 13)
    return node.inputs.size() == 1 || input_is(graph, node, 1, {DType::kInt64});
  return node.inputs.size() == 1;
}

// --- Slice -----------------------------------------------------------------

void run_slice(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
               std::span<Tensor> outputs, int threads) {
  const Shape& in = inputs[0].shape();
  const auto rank = static_cast<std::int64_t>(in.size());
  // Opset 10 moved starts, ends and axes from attributes to inputs and added steps.
  std::vector<std::int64_t> starts, ends, axes, steps;
  if (graph.opset < 10) {
    starts = node.attributes.get_ints("starts");
    ends = node.attributes.get_ints("ends");
    axes = node.attributes.get_ints("axes", {});
  } else {
    starts = read_ints(inputs[1]);
    ends = read_ints(inputs[2]);
    if (inputs.size() > 3 && !inputs[3].empty()) axes = read_ints(inputs[3]);
    if (inputs.size() > 4 && !inputs[4].empty()) steps = read_ints(inputs[4]);
  }
  if (axes.empty()) {
    for (std::size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<std::int64_t>(i));
  }
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() ||
      steps.size() != starts.size()) {
    throw node_error(node, "starts, ends, axes and steps differ in length");
  }

  std::vector<std::int64_t> first(in.size(), 0), step(in.size(), 1);
  Shape shape = in;
  std::vector<bool> seen(in.size(), false);
  for (std::size_t i = 0; i < starts.size(); ++i) {
    const auto d = static_cast<std::size_t>(resolve_axis(axes[i], rank, node));
    if (seen[d]) throw node_error(node, "an axis appears twice");
    seen[d] = true;
    const std::int64_t dim = in[d];
    const std::int64_t s = steps[i];
    if (s == 0) throw node_error(node, "step is 0");
    std::int64_t start = starts[i] < 0 ? starts[i] + dim : starts[i];
    std::int64_t end = ends[i] < 0 ? ends[i] + dim : ends[i];
    // Clamping as ONNX specifies: a negative step walks from dim-1 down to
    // just past -1.
    if (s > 0) {
      start = std::clamp<std::int64_t>(start, 0, dim);
      end = std::clamp<std::int64_t>(end, 0, dim);
      shape[d] = std::max<std::int64_t>(0, (end - start + s - 1) / s);
    } else {
      start = std::clamp<std::int64_t>(start, 0, dim - 1);
      end = std::clamp<std::int64_t>(end, -1, dim - 1);
      shape[d] = std::max<std::int64_t>(0, (start - end + (-s) - 1) / (-s));
    }
    first[d] = start;
    step[d] = s;
  }
  check_output_shape(node, outputs[0], shape);
  const std::vector<std::int64_t> strides = row_major_strides(in);
  Tables tables(in.size());
  for (std::size_t d = 0; d < in.size(); ++d) {
    tables[d].resize(static_cast<std::size_t>(shape[d]));
    for (std::int64_t i = 0; i < shape[d]; ++i) {
      tables[d][static_cast<std::size_t>(i)] = (first[d] + i * step[d]) * strides[d];
    }
  }
  axis_copy(inputs[0].raw(), outputs[0].raw(), dtype_size(inputs[0].dtype()), tables, nullptr,
            threads);
}

bool check_slice(const Graph& graph, const Node& node) {
  if (!check_data_and_output(graph, node)) return false;
  if (graph.opset < 10) return node.inputs.size() == 1 && node.attributes.has("starts");
  if (node.inputs.size() < 3 || node.inputs.size() > 5) return false;
  for (std::size_t i = 1; i < node.inputs.size(); ++i) {
    if (node.inputs[i] == kNoValue && i >= 3) continue;
    if (!input_is(graph, node, i, {DType::kInt32, DType::kInt64})) return false;
  }
  return true;
}

// --- Gather and GatherElements ---------------------------------------------

void run_gather(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                std::span<Tensor> outputs, int threads) {
  const Tensor& data = inputs[0];
  const Tensor& indices = inputs[1];
  const Shape& shape = data.shape();
  const auto axis =
      static_cast<std::size_t>(resolve_axis(node.attributes.get_int("axis", 0), data.rank(), node));
  Shape expected(shape.begin(), shape.begin() + static_cast<std::ptrdiff_t>(axis));
  expected.insert(expected.end(), indices.shape().begin(), indices.shape().end());
  expected.insert(expected.end(), shape.begin() + static_cast<std::ptrdiff_t>(axis) + 1,
                  shape.end());
  check_output_shape(node, outputs[0], expected);

  const std::int64_t count = indices.numel();
  std::vector<std::int64_t> rows(static_cast<std::size_t>(count));
  for (std::int64_t k = 0; k < count; ++k) {
    rows[static_cast<std::size_t>(k)] = wrap_index(indices.int_at(k), shape[axis], node);
  }
  const std::size_t element = dtype_size(data.dtype());
  const std::int64_t outer = dims_product(shape, 0, axis);
  const std::size_t block =
      static_cast<std::size_t>(dims_product(shape, axis + 1, shape.size())) * element;
  const auto* source = static_cast<const unsigned char*>(data.raw());
  auto* destination = static_cast<unsigned char*>(outputs[0].raw());
  const int team = threads_for(outputs[0].numel(), threads);
#pragma omp parallel for collapse(2) num_threads(team) schedule(static) if (team > 1)
  for (std::int64_t o = 0; o < outer; ++o) {
    for (std::int64_t k = 0; k < count; ++k) {
      const auto row = static_cast<std::size_t>(rows[static_cast<std::size_t>(k)]);
      const auto from = static_cast<std::size_t>(o) * static_cast<std::size_t>(shape[axis]) + row;
      const auto to = static_cast<std::size_t>(o * count + k);
      std::memcpy(destination + to * block, source + from * block, block);
    }
  }
}

bool check_gather(const Graph& graph, const Node& node) {
  return node.inputs.size() == 2 && check_data_and_output(graph, node) &&
         input_is(graph, node, 1, {DType::kInt32, DType::kInt64});
}

// GatherND: each index tuple (the last axis of `indices`, after
// batch_dims leading axes shared with `data`) picks one slice of `data`.
//   output shape = indices.shape[:-1] + data.shape[batch_dims + m:]
// where m = indices.shape[-1]; negative indices count from the end.
void run_gather_nd(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                   std::span<Tensor> outputs, int threads) {
  const Tensor& data = inputs[0];
  const Tensor& indices = inputs[1];
  const Shape& shape = data.shape();
  const Shape& index_shape = indices.shape();
  const std::int64_t batch_dims = node.attributes.get_int("batch_dims", 0);
  if (index_shape.empty()) throw node_error(node, "indices must have rank 1 or more");
  const auto batch = static_cast<std::size_t>(batch_dims);
  const std::int64_t m = index_shape.back();
  if (batch_dims < 0 || batch >= index_shape.size() || batch >= shape.size() || m < 1 ||
      batch + static_cast<std::size_t>(m) > shape.size()) {
    throw node_error(node, "batch_dims and the index tuples do not fit the data's rank");
  }
  for (std::size_t d = 0; d < batch; ++d) {
    if (shape[d] != index_shape[d]) throw node_error(node, "batch dimensions differ");
  }
  const std::size_t tuple_end = batch + static_cast<std::size_t>(m);
  Shape expected(index_shape.begin(), index_shape.end() - 1);
  expected.insert(expected.end(), shape.begin() + static_cast<std::ptrdiff_t>(tuple_end),
                  shape.end());
  check_output_shape(node, outputs[0], expected);

  const std::vector<std::int64_t> strides = row_major_strides(shape);
  const std::size_t element = dtype_size(data.dtype());
  const std::size_t slice =
      static_cast<std::size_t>(dims_product(shape, tuple_end, shape.size())) * element;
  const std::int64_t batches = dims_product(shape, 0, batch);
  const std::int64_t batch_stride = batch > 0 ? strides[batch - 1] : 0;
  // Tuples per batch.
  const std::int64_t tuples = dims_product(index_shape, batch, index_shape.size() - 1);
  std::vector<std::int64_t> offsets(static_cast<std::size_t>(batches * tuples));
  for (std::int64_t b = 0; b < batches; ++b) {
    for (std::int64_t t = 0; t < tuples; ++t) {
      std::int64_t offset = b * batch_stride;
      for (std::int64_t k = 0; k < m; ++k) {
        const std::size_t axis = batch + static_cast<std::size_t>(k);
        const std::int64_t index = indices.int_at((b * tuples + t) * m + k);
        offset += wrap_index(index, shape[axis], node) * strides[axis];
      }
      offsets[static_cast<std::size_t>(b * tuples + t)] = offset;
    }
  }
  const auto* source = static_cast<const unsigned char*>(data.raw());
  auto* destination = static_cast<unsigned char*>(outputs[0].raw());
  const auto count = static_cast<std::int64_t>(offsets.size());
  const int team = threads_for(outputs[0].numel(), threads);
#pragma omp parallel for num_threads(team) schedule(static) if (team > 1)
  for (std::int64_t i = 0; i < count; ++i) {
    std::memcpy(destination + static_cast<std::size_t>(i) * slice,
                source + static_cast<std::size_t>(offsets[static_cast<std::size_t>(i)]) * element,
                slice);
  }
}

bool check_gather_nd(const Graph& graph, const Node& node) {
  return node.inputs.size() == 2 && check_data_and_output(graph, node) &&
         input_is(graph, node, 1, {DType::kInt64});
}

template <typename T>
void gather_elements_typed(const std::vector<std::int64_t>& offsets, const Tensor& data,
                           Tensor& out) {
  const T* source = static_cast<const T*>(data.raw());
  T* destination = static_cast<T*>(out.raw());
  for (std::size_t i = 0; i < offsets.size(); ++i) {
    destination[i] = source[static_cast<std::size_t>(offsets[i])];
  }
}

void run_gather_elements(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                         std::span<Tensor> outputs, int threads) {
  const Tensor& data = inputs[0];
  const Tensor& indices = inputs[1];
  const auto axis =
      static_cast<std::size_t>(resolve_axis(node.attributes.get_int("axis", 0), data.rank(), node));
  const std::vector<std::int64_t> offsets = offsets_along_axis(node, data.shape(), indices, axis);
  check_output_shape(node, outputs[0], indices.shape());
  switch (dtype_size(data.dtype())) {
    case 1:
      return gather_elements_typed<std::uint8_t>(offsets, data, outputs[0]);
    case 2:
      return gather_elements_typed<std::uint16_t>(offsets, data, outputs[0]);
    case 4:
      return gather_elements_typed<std::uint32_t>(offsets, data, outputs[0]);
    default:
      gather_elements_typed<std::uint64_t>(offsets, data, outputs[0]);
  }
}

constexpr OpEntry kIndexOps[] = {
    {"Transpose", run_transpose,
     [](const Graph& graph, const Node& node) {
       return node.inputs.size() == 1 && check_data_and_output(graph, node);
     }},
    {"DepthToSpace", run_block_op, check_block_op},
    {"SpaceToDepth", run_block_op, check_block_op},
    {"Concat", run_concat, check_concat},
    {"Split", run_split, check_split},
    {"Slice", run_slice, check_slice},
    {"Gather", run_gather, check_gather},
    {"GatherElements", run_gather_elements, check_gather},
    {"GatherND", run_gather_nd, check_gather_nd},
};

}  // namespace

std::span<const OpEntry> index_ops() { return kIndexOps; }

}  // namespace collage::native
