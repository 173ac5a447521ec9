// Shape and type ops: ops that reinterpret or create tensors rather than
// compute on them (Reshape, Squeeze, Shape, Cast, Range, Constant, ...).
//
// Output shapes come from the graph's static types. The ops that only
// reinterpret their input (Reshape, Flatten, Squeeze, Unsqueeze) still
// compute the shape their attributes and inputs say and compare it with the
// static one, so that a wrong shape inference shows up as an Error here
// instead of as silently scrambled data downstream.
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "collage/backends/native/broadcast.h"
#include "collage/backends/native/tensor_kernels.h"

namespace collage::native {
namespace {

constexpr std::initializer_list<DType> kCastable = {
    DType::kFloat32, DType::kFloat64, DType::kInt8, DType::kUInt8,  DType::kInt16,
    DType::kInt32,   DType::kInt64,   DType::kBool, DType::kFloat16};

// Copies `in` to `out` unchanged after checking that the op's own idea of
// the output shape matches the static one.
void copy_checked(const Node& node, const Tensor& in, Tensor& out, const Shape& expected) {
  if (expected != out.shape()) {
    throw node_error(node, "computed output shape " + shape_to_string(expected) +
                               " differs from the graph's " + shape_to_string(out.shape()));
  }
  if (in.byte_size() > 0) std::memcpy(out.raw(), in.raw(), in.byte_size());
}

bool check_same_type_copy(const Graph& graph, const Node& node) {
  const std::optional<DType> dtype = input_dtype(graph, node, 0);
  return dtype && output_dtype(graph, node, 0) == *dtype;
}

// --- reinterpreting ops ----------------------------------------------------

void run_reshape(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                 std::span<Tensor> outputs, int threads) {
  const Shape& in = inputs[0].shape();
  const std::vector<std::int64_t> requested = read_ints(inputs[1]);
  // From opset 14 on, allowzero=1 makes a 0 mean an empty dimension instead
  // of "copy the input's dimension".
  const bool allow_zero = node.attributes.get_int("allowzero", 0) != 0;
  Shape shape(requested.size());
  std::int64_t known = 1;
  std::optional<std::size_t> inferred;
  for (std::size_t d = 0; d < requested.size(); ++d) {
    std::int64_t dim = requested[d];
    if (dim == 0 && !allow_zero) {
      if (d >= in.size()) throw node_error(node, "0 refers past the input's rank");
      dim = in[d];
    }
    if (dim == -1) {
      if (inferred) throw node_error(node, "more than one -1 in the shape");
      inferred = d;
      continue;
    }
    if (dim < 0) throw node_error(node, "negative dimension " + std::to_string(dim));
    shape[d] = dim;
    known *= dim;
  }
  if (inferred) {
    if (known == 0 || inputs[0].numel() % known != 0) {
      throw node_error(node, "cannot infer -1 for " + shape_to_string(in));
    }
    shape[*inferred] = inputs[0].numel() / known;
  }
  if (shape_numel(shape) != inputs[0].numel()) {
    throw node_error(node,
                     "cannot reshape " + shape_to_string(in) + " to " + shape_to_string(shape));
  }
  copy_checked(node, inputs[0], outputs[0], shape);
}

bool check_reshape(const Graph& graph, const Node& node) {
  return node.inputs.size() == 2 && check_same_type_copy(graph, node) &&
         input_is(graph, node, 1, {DType::kInt64, DType::kInt32});
}

void run_flatten(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                 std::span<Tensor> outputs, int threads) {
  const Shape& in = inputs[0].shape();
  const auto rank = static_cast<std::int64_t>(in.size());
  // axis may equal the rank (everything in the first dimension).
  std::int64_t axis = node.attributes.get_int("axis", 1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis > rank) throw node_error(node, "axis out of range");
  std::int64_t outer = 1;
  std::int64_t inner = 1;
  for (std::int64_t d = 0; d < rank; ++d)
    (d < axis ? outer : inner) *= in[static_cast<std::size_t>(d)];
  copy_checked(node, inputs[0], outputs[0], Shape{outer, inner});
}

void run_squeeze(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                 std::span<Tensor> outputs, int threads) {
  const Shape& in = inputs[0].shape();
  const auto rank = static_cast<std::int64_t>(in.size());
  const std::optional<std::vector<std::int64_t>> axes =
      ints_from_input_or_attribute(graph, node, inputs, 1, "axes", 13);
  std::vector<bool> drop(in.size(), false);
  if (!axes) {
    for (std::size_t d = 0; d < in.size(); ++d) drop[d] = in[d] == 1;
  } else {
    for (std::int64_t axis : *axes) {
      const auto d = static_cast<std::size_t>(resolve_axis(axis, rank, node));
      if (in[d] != 1) throw node_error(node, "cannot squeeze a dimension that is not 1");
      drop[d] = true;
    }
  }
  Shape shape;
  for (std::size_t d = 0; d < in.size(); ++d) {
    if (!drop[d]) shape.push_back(in[d]);
  }
  copy_checked(node, inputs[0], outputs[0], shape);
}

void run_unsqueeze(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                   std::span<Tensor> outputs, int threads) {
  const Shape& in = inputs[0].shape();
  const std::optional<std::vector<std::int64_t>> axes =
      ints_from_input_or_attribute(graph, node, inputs, 1, "axes", 13);
  if (!axes) throw node_error(node, "axes are missing");
  // Axes index the output, whose rank counts the inserted dimensions.
  const auto rank = static_cast<std::int64_t>(in.size() + axes->size());
  std::vector<bool> inserted(static_cast<std::size_t>(rank), false);
  for (std::int64_t axis : *axes) {
    const auto d = static_cast<std::size_t>(resolve_axis(axis, rank, node));
    if (inserted[d]) throw node_error(node, "repeated axis");
    inserted[d] = true;
  }
  Shape shape;
  std::size_t next = 0;
  for (std::size_t d = 0; d < inserted.size(); ++d) shape.push_back(inserted[d] ? 1 : in[next++]);
  copy_checked(node, inputs[0], outputs[0], shape);
}

bool check_axes_op(const Graph& graph, const Node& node) {
  if (!check_same_type_copy(graph, node)) return false;
  if (graph.opset >= 13)
    return node.inputs.size() == 1 || input_is(graph, node, 1, {DType::kInt64});
  return node.inputs.size() == 1;
}

void run_identity(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                  std::span<Tensor> outputs, int threads) {
  copy_checked(node, inputs[0], outputs[0], inputs[0].shape());
}

// Inference-mode Dropout: the identity, with a mask that keeps everything.
void run_dropout(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                 std::span<Tensor> outputs, int threads) {
  const bool training = inputs.size() > 2 && !inputs[2].empty() && inputs[2].int_at(0) != 0;
  const double ratio = inputs.size() > 1 && !inputs[1].empty() ? inputs[1].number_at(0) : 0.5;
  if (training && ratio != 0.0) throw node_error(node, "training-mode Dropout is not supported");
  copy_checked(node, inputs[0], outputs[0], inputs[0].shape());
  if (outputs.size() > 1 && !outputs[1].empty()) {
    bool* mask = outputs[1].data<bool>();
    std::fill(mask, mask + outputs[1].numel(), true);
  }
}

// Only inference mode: training_mode absent or a constant false, or a
// constant ratio of 0 (which drops nothing).
bool dropout_is_inference(const Graph& graph, const Node& node) {
  ValueId training = node.input(2);
  if (training == kNoValue) return true;
  const Value& mode = graph.value(training);
  if (mode.is_constant() && mode.constant->numel() == 1 && mode.constant->int_at(0) == 0)
    return true;
  ValueId ratio = node.input(1);
  if (ratio == kNoValue) return false;
  const Value& r = graph.value(ratio);
  return r.is_constant() && r.constant->numel() == 1 && r.constant->number_at(0) == 0.0;
}

bool check_dropout(const Graph& graph, const Node& node) {
  if (!check_same_type_copy(graph, node)) return false;
  if (!dropout_is_inference(graph, node)) return false;
  return node.outputs.size() == 1 || node.outputs[1] == kNoValue ||
         output_dtype(graph, node, 1) == DType::kBool;
}

// --- shape queries ---------------------------------------------------------

void run_shape(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
               std::span<Tensor> outputs, int threads) {
  const Shape& in = inputs[0].shape();
  const auto rank = static_cast<std::int64_t>(in.size());
  // Opset 15 added start and end, clamped to [0, rank] after adding rank to
  // negative values.
  auto clamp = [&](std::int64_t index) {
    if (index < 0) index += rank;
    return std::clamp<std::int64_t>(index, 0, rank);
  };
  const std::int64_t start = clamp(node.attributes.get_int("start", 0));
  const std::int64_t end = clamp(node.attributes.get_int("end", rank));
  const std::int64_t count = std::max<std::int64_t>(0, end - start);
  if (outputs[0].shape() != Shape{count}) throw node_error(node, "output shape differs");
  auto* out = outputs[0].data<std::int64_t>();
  for (std::int64_t i = 0; i < count; ++i) out[i] = in[static_cast<std::size_t>(start + i)];
}

void run_size(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
              std::span<Tensor> outputs, int threads) {
  if (outputs[0].numel() != 1) throw node_error(node, "output must be a scalar");
  outputs[0].data<std::int64_t>()[0] = inputs[0].numel();
}

bool check_shape_query(const Graph& graph, const Node& node) {
  return node.inputs.size() == 1 && output_dtype(graph, node, 0) == DType::kInt64;
}

// --- creating ops ----------------------------------------------------------

// Fills `out` with copies of the one element at `value`.
void fill_with(Tensor& out, const void* value) {
  const std::size_t size = dtype_size(out.dtype());
  auto* bytes = static_cast<unsigned char*>(out.raw());
  for (std::int64_t i = 0; i < out.numel(); ++i) {
    std::memcpy(bytes + static_cast<std::size_t>(i) * size, value, size);
  }
}

void run_constant_of_shape(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                           std::span<Tensor> outputs, int threads) {
  const std::vector<std::int64_t> shape = read_ints(inputs[0]);
  if (Shape(shape.begin(), shape.end()) != outputs[0].shape()) {
    throw node_error(node, "output shape differs from the shape input");
  }
  if (!node.attributes.has("value")) {
    // The default value is a float32 zero.
    std::memset(outputs[0].raw(), 0, outputs[0].byte_size());
    return;
  }
  const Tensor& value = node.attributes.get_tensor("value");
  if (value.numel() != 1 || value.dtype() != outputs[0].dtype()) {
    throw node_error(node, "value must be one element of the output's dtype");
  }
  fill_with(outputs[0], value.raw());
}

bool check_constant_of_shape(const Graph& graph, const Node& node) {
  if (node.inputs.size() != 1 || !input_is(graph, node, 0, {DType::kInt64})) return false;
  const DType dtype = output_dtype(graph, node, 0);
  if (!node.attributes.has("value")) return dtype == DType::kFloat32;
  const auto& attribute = node.attributes.all().at("value");
  const Tensor* value = std::get_if<Tensor>(&attribute);
  return value != nullptr && value->numel() == 1 && value->dtype() == dtype &&
         dtype_size(dtype) <= 8;
}

// The value attribute of a Constant that this kernel understands, as a tensor.
std::optional<Tensor> constant_value(const Node& node) {
  const Attributes& attributes = node.attributes;
  if (attributes.has("value")) {
    const Tensor* value = std::get_if<Tensor>(&attributes.all().at("value"));
    return value != nullptr ? std::optional<Tensor>(*value) : std::nullopt;
  }
  if (attributes.has("value_float")) {
    return Tensor::from_vector<float>({attributes.get_float("value_float")}, {});
  }
  if (attributes.has("value_floats")) {
    const std::vector<float>& values = attributes.get_floats("value_floats");
    return Tensor::from_vector<float>(values, {static_cast<std::int64_t>(values.size())});
  }
  if (attributes.has("value_int")) {
    return Tensor::from_vector<std::int64_t>({attributes.get_int("value_int")}, {});
  }
  if (attributes.has("value_ints")) {
    const std::vector<std::int64_t>& values = attributes.get_ints("value_ints");
    return Tensor::from_vector<std::int64_t>(values, {static_cast<std::int64_t>(values.size())});
  }
  // value_string(s) and sparse_value have no tensor form here.
  return std::nullopt;
}

void run_constant(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                  std::span<Tensor> outputs, int threads) {
  const std::optional<Tensor> value = constant_value(node);
  if (!value) throw node_error(node, "unsupported value attribute");
  if (value->type() != outputs[0].type()) {
    throw node_error(node, "value " + value->type().to_string() + " differs from the graph's " +
                               outputs[0].type().to_string());
  }
  if (value->byte_size() > 0) std::memcpy(outputs[0].raw(), value->raw(), value->byte_size());
}

bool check_constant(const Graph& graph, const Node& node) {
  const std::optional<Tensor> value = constant_value(node);
  return node.inputs.empty() && value && value->type() == graph.type(node.outputs[0]);
}

void run_range(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
               std::span<Tensor> outputs, int threads) {
  for (const Tensor& input : inputs) {
    if (input.numel() != 1) throw node_error(node, "start, limit and delta must be scalars");
  }
  visit_dtype(outputs[0].dtype(), [&](auto type) {
    using T = typename decltype(type)::type;
    if constexpr (!std::is_same_v<T, bool>) {
      const T start = inputs[0].data<T>()[0];
      const T limit = inputs[1].data<T>()[0];
      const T delta = inputs[2].data<T>()[0];
      if (delta == 0) throw node_error(node, "delta is 0");
      const double span =
          (static_cast<double>(limit) - static_cast<double>(start)) / static_cast<double>(delta);
      const auto count = std::max<std::int64_t>(0, static_cast<std::int64_t>(std::ceil(span)));
      if (outputs[0].shape() != Shape{count}) {
        throw node_error(node, "range has " + std::to_string(count) + " elements, the graph says " +
                                   shape_to_string(outputs[0].shape()));
      }
      T* out = outputs[0].data<T>();
      for (std::int64_t i = 0; i < count; ++i)
        out[i] = static_cast<T>(start + static_cast<T>(i) * delta);
    }
  });
}

bool check_range(const Graph& graph, const Node& node) {
  const DType dtype = output_dtype(graph, node, 0);
  if (node.inputs.size() != 3) return false;
  if (!is_one_of(dtype,
                 {DType::kFloat32, DType::kFloat64, DType::kInt16, DType::kInt32, DType::kInt64})) {
    return false;
  }
  for (std::size_t i = 0; i < 3; ++i) {
    if (!input_is(graph, node, i, {dtype})) return false;
  }
  return true;
}

template <typename From, typename To>
To convert(From value) {
  if constexpr (std::is_same_v<To, bool>)
    return value != From{};
  else
    return static_cast<To>(value);
}

// A cast from or to float16 goes through float32, converted by the F16C
// instructions the build targets (round to nearest even, as ONNX's Cast).
void cast_half(const Tensor& in, Tensor& out, int threads) {
  const std::int64_t n = in.numel();
  const int team = threads_for(n, threads);
  if (in.dtype() == DType::kFloat16 && out.dtype() == DType::kFloat16) {
    std::memcpy(out.raw(), in.raw(), in.byte_size());
    return;
  }
  if (in.dtype() == DType::kFloat16) {
    const auto* x = static_cast<const std::uint16_t*>(in.raw());
    visit_dtype(out.dtype(), [&](auto to_type) {
      using To = typename decltype(to_type)::type;
      To* y = out.data<To>();
#pragma omp parallel for num_threads(team) schedule(static) if (team > 1)
      for (std::int64_t i = 0; i < n; ++i) y[i] = convert<float, To>(_cvtsh_ss(x[i]));
    });
    return;
  }
  auto* y = static_cast<std::uint16_t*>(out.raw());
  visit_dtype(in.dtype(), [&](auto from_type) {
    using From = typename decltype(from_type)::type;
    const From* x = in.data<From>();
#pragma omp parallel for num_threads(team) schedule(static) if (team > 1)
    for (std::int64_t i = 0; i < n; ++i) {
      // A named value: clang defines _cvtss_sh as a macro, and the comma of
      // a template argument list would split its arguments.
      const float value = convert<From, float>(x[i]);
      y[i] = _cvtss_sh(value, _MM_FROUND_TO_NEAREST_INT);
    }
  });
}

// Cast, and CastLike (opset 15), whose second input only names the type
// the graph already gives its output.
void run_cast(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
              std::span<Tensor> outputs, int threads) {
  const Tensor& in = inputs[0];
  Tensor& out = outputs[0];
  if (in.shape() != out.shape()) throw node_error(node, "output shape differs");
  if (in.dtype() == DType::kFloat16 || out.dtype() == DType::kFloat16) {
    cast_half(in, out, threads);
    return;
  }
  visit_dtype(in.dtype(), [&](auto from_type) {
    using From = typename decltype(from_type)::type;
    visit_dtype(out.dtype(), [&](auto to_type) {
      using To = typename decltype(to_type)::type;
      const From* x = in.data<From>();
      To* y = out.data<To>();
      const std::int64_t n = in.numel();
      const int team = threads_for(n, threads);
#pragma omp parallel for num_threads(team) schedule(static) if (team > 1)
      for (std::int64_t i = 0; i < n; ++i) y[i] = convert<From, To>(x[i]);
    });
  });
}

bool check_cast(const Graph& graph, const Node& node) {
  const std::size_t inputs = node.op_type == "CastLike" ? 2 : 1;
  return node.inputs.size() == inputs && input_is(graph, node, 0, kCastable) &&
         is_one_of(output_dtype(graph, node, 0), kCastable);
}

bool check_any_copy(const Graph& graph, const Node& node) {
  return node.inputs.size() == 1 && check_same_type_copy(graph, node);
}

constexpr OpEntry kShapeOps[] = {
    {"Reshape", run_reshape, check_reshape},
    {"Flatten", run_flatten, check_any_copy},
    {"Squeeze", run_squeeze, check_axes_op},
    {"Unsqueeze", run_unsqueeze, check_axes_op},
    {"Identity", run_identity, check_any_copy},
    {"Dropout", run_dropout, check_dropout},
    {"Shape", run_shape, check_shape_query},
    {"Size", run_size, check_shape_query},
    {"ConstantOfShape", run_constant_of_shape, check_constant_of_shape},
    {"Constant", run_constant, check_constant},
    {"Range", run_range, check_range},
    {"Cast", run_cast, check_cast},
    {"CastLike", run_cast, check_cast},
};

}  // namespace

std::span<const OpEntry> shape_ops() { return kShapeOps; }

}  // namespace collage::native
