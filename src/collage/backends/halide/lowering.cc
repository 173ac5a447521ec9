// The Lowerer's core: values, pipeline arguments, stages, and the dispatch
// of each node to its op table row's lowering.
#include "collage/backends/halide/lowering.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "collage/backends/halide/constants.h"
#include "collage/backends/halide/lowerer.h"
#include "collage/ir/error.h"
#include "collage/ir/window.h"

namespace collage::halide {
namespace {

using Halide::Expr;
using Halide::Func;
using Halide::Var;

// The largest dense convolution (input channels x kernel taps) and matrix
// product (reduction length; multiply-adds) the backend takes.
constexpr std::int64_t kMaxDenseTaps = 27;
constexpr std::int64_t kMaxProductDepth = 256;
constexpr std::int64_t kMaxProductWork = std::int64_t{1} << 22;

// Halide indexes with 32-bit integers.
constexpr std::int64_t kMaxElements = std::numeric_limits<std::int32_t>::max() / 2;

bool is_float_value(const Graph& graph, ValueId id) {
  return id != kNoValue && graph.type(id).dtype == DType::kFloat32;
}

bool static_shape(const TensorType& type) {
  std::int64_t elements = 1;
  for (std::int64_t d : type.shape) {
    if (d <= 0 || d > kMaxElements) return false;
    elements *= d;
    if (elements > kMaxElements) return false;
  }
  return true;
}

// Declares a pipeline argument (input or output) dense row-major with exact
// bounds, so the compiler knows every extent and stride: a loop over fused
// dimensions then splits its index by constants, not by divisions by
// run-time extents. The same numbers are the autoschedulers' estimates.
void set_dense_layout(Halide::OutputImageParam buffer, const Shape& shape) {
  std::int64_t stride = 1;
  for (int h = 0; h < static_cast<int>(shape.size()); ++h) {
    const std::int64_t extent = shape[shape.size() - 1 - static_cast<std::size_t>(h)];
    buffer.dim(h)
        .set_bounds(0, static_cast<int>(extent))
        .set_stride(static_cast<int>(stride))
        .set_estimate(0, static_cast<int>(extent));
    stride *= extent;
  }
}

const std::vector<std::string>& unary_ops() {
  static const std::vector<std::string> ops = {
      "Relu", "LeakyRelu", "Sigmoid",  "HardSigmoid", "HardSwish", "Swish", "Tanh",
      "Exp",  "Log",       "Sqrt",     "Reciprocal",  "Neg",       "Abs",   "Floor",
      "Ceil", "Erf",       "Identity", "Elu",         "Softplus",  "Gelu",  "Clip"};
  return ops;
}

const std::vector<std::string>& binary_ops() {
  static const std::vector<std::string> ops = {"Add", "Sub", "Mul", "Div",
                                               "Pow", "Max", "Min", "PRelu"};
  return ops;
}

}  // namespace

Lowered Lowerer::run() {
  for (ValueId id : graph_.inputs()) add_param(id);
  for (const Node& node : graph_.nodes()) lower_node(node);
  Lowered lowered;
  std::vector<bool> taken(graph_.num_values(), false);
  for (ValueId id : graph_.outputs()) {
    // An output must be its own Func: copy a pass-through input or
    // constant, or a value listed twice.
    const bool own = graph_.value(id).producer != kNoNode && !taken[static_cast<std::size_t>(id)];
    taken[static_cast<std::size_t>(id)] = true;
    Func out = own ? func(id) : copy_of(id);
    stage_of(out).is_output = true;
    set_dense_layout(out.output_buffer(), shape(id));
    lowered.outputs.push_back(out);
  }
  lowered.params = params_;
  lowered.param_values = param_values_;
  lowered.stages = stages_;
  return lowered;
}

void Lowerer::lower_node(const Node& node) {
  const std::string& op = node.op_type;
  if (std::find(unary_ops().begin(), unary_ops().end(), op) != unary_ops().end())
    return lower_unary(node);
  if (std::find(binary_ops().begin(), binary_ops().end(), op) != binary_ops().end())
    return lower_binary(node);
  if (op == "Conv") return lower_conv(node);
  if (op == "MaxPool" || op == "AveragePool") return lower_pool(node);
  if (op == "GlobalAveragePool" || op == "GlobalMaxPool") return lower_global_pool(node);
  if (op.rfind("Reduce", 0) == 0) return lower_reduce(node);
  if (op == "MatMul") return lower_matmul(node);
  if (op == "Gemm") return lower_gemm(node);
  if (op == "Softmax") return lower_softmax(node);
  if (op == "LayerNormalization") return lower_layer_norm(node);
  if (op == "BatchNormalization") return lower_batch_norm(node);
  if (op == "Reshape" || op == "Flatten" || op == "Squeeze" || op == "Unsqueeze") {
    return lower_reshape(node);
  }
  if (op == "Transpose") return lower_transpose(node);
  if (op == "Concat") return lower_concat(node);
  if (op == "Split") return lower_split(node);
  if (op == "Slice") return lower_slice(node);
  if (op == "Pad") return lower_pad(node);
  throw Error(fmt::format("no Halide lowering for {}", op), {.node = node.name});
}

// ---- values

Func& Lowerer::func(ValueId id) {
  Func& f = funcs_[static_cast<std::size_t>(id)];
  if (!f.defined()) {
    const Value& value = graph_.value(id);
    if (!value.is_constant()) {
      throw Error(fmt::format("value '{}' is read before it is defined", value.name));
    }
    define_constant(id);
  }
  return f;
}

Expr Lowerer::at_or(ValueId id, const std::vector<Expr>& index, const std::vector<bool>& checked,
                    Expr outside) {
  // `likely` marks the inside as the common case, as Halide's boundary
  // conditions do: the loops are split into a steady state without the
  // checks and thin borders with them.
  std::vector<Expr> clamped = index;
  Expr inside;
  for (std::size_t i = 0; i < index.size(); ++i) {
    if (!checked[i]) continue;
    const Expr extent = static_cast<int>(shape(id)[i]);
    const Expr here = index[i] >= 0 && index[i] < extent;
    inside = inside.defined() ? (inside && here) : here;
    clamped[i] = Halide::clamp(Halide::likely(index[i]), 0, extent - 1);
  }
  if (!inside.defined()) return at(id, index);
  return Halide::select(Halide::likely(inside), at(id, clamped), outside);
}

Expr Lowerer::broadcast_at(ValueId id, const std::vector<Var>& out) {
  const int r = rank(id);
  const int offset = static_cast<int>(out.size()) - r;
  std::vector<Expr> index;
  for (int i = 0; i < r; ++i) {
    index.push_back(shape(id)[static_cast<std::size_t>(i)] == 1 ? Expr(0) : Expr(out[i + offset]));
  }
  return at(id, index);
}

std::vector<Var> Lowerer::vars(std::size_t rank) {
  std::vector<Var> v;
  for (std::size_t i = 0; i < rank; ++i) v.emplace_back(fmt::format("d{}", i));
  return v;
}

// ---- stages

Stage& Lowerer::stage_of(const Func& f) {
  for (Stage& stage : stages_) {
    if (stage.func.name() == f.name()) return stage;
  }
  throw Error("internal: a Func without a stage");
}

Func Lowerer::new_func(const std::string& hint, const Shape& shape, bool materialize) {
  Func f(fmt::format("{}_{}", hint, stages_.size()));
  stages_.push_back(Stage{f, shape, materialize, false});
  return f;
}

Func Lowerer::pure(const std::string& hint, const Shape& shape, const Body& body,
                   bool materialize) {
  Func f = new_func(hint, shape, materialize);
  const std::vector<Var> v = vars(shape.size());
  f(reversed(v)) = body(v);
  return f;
}

void Lowerer::define(ValueId id, const Body& body, const std::string& hint) {
  funcs_[static_cast<std::size_t>(id)] = pure(hint, shape(id), body);
}

Func Lowerer::reduce(const std::string& hint, const Shape& out_shape, Halide::RDom domain,
                     const Term& term, Combine combine, Expr init) {
  Func f = new_func(hint, out_shape, /*materialize=*/true);
  const std::vector<Var> v = vars(out_shape.size());
  f(reversed(v)) = init;
  const Expr t = term(v, domain);
  switch (combine) {
    case Combine::kSum:
      f(reversed(v)) += t;
      break;
    case Combine::kMax:
      f(reversed(v)) = Halide::max(f(reversed(v)), t);
      break;
    case Combine::kMin:
      f(reversed(v)) = Halide::min(f(reversed(v)), t);
      break;
  }
  return f;
}

// ---- pipeline arguments

void Lowerer::add_param(ValueId id) {
  const Shape& s = shape(id);
  Halide::ImageParam param(Halide::Float(32), static_cast<int>(s.size()),
                           fmt::format("p{}", params_.size()));
  set_dense_layout(param, s);
  params_.push_back(param);
  param_values_.push_back(id);
  funcs_[static_cast<std::size_t>(id)] =
      pure("in", s, [&](const std::vector<Var>& v) { return param(reversed(v)); });
}

void Lowerer::define_constant(ValueId id) {
  const Tensor& tensor = *graph_.value(id).constant;
  if (tensor.dtype() != DType::kFloat32) {
    throw Error(fmt::format("constant '{}' of type {} is read as data", graph_.value(id).name,
                            dtype_name(tensor.dtype())));
  }
  if (tensor.numel() == 1) {
    const float value = tensor.data<float>()[0];
    define(
        id, [value](const std::vector<Var>&) { return Expr(value); }, "const");
  } else {
    add_param(id);
  }
}

Func Lowerer::copy_of(ValueId id) {
  return pure("copy", shape(id), [&](const std::vector<Var>& v) { return at(id, exprs(v)); });
}

void Lowerer::materialize(ValueId id) {
  if (graph_.value(id).producer != kNoNode) stage_of(func(id)).materialize = true;
}

namespace {

// The inputs that are parameters (read at compile time), by op.
bool is_parameter_input(const Node& node, std::size_t i) {
  const std::string& op = node.op_type;
  if (op == "Clip") return i >= 1;
  if (op.rfind("Reduce", 0) == 0) return i == 1;
  if (op == "Reshape" || op == "Squeeze" || op == "Unsqueeze") return i == 1;
  if (op == "Split") return i == 1;
  if (op == "Slice") return i >= 1;
  if (op == "Pad") return i >= 1;
  return false;
}

bool window_ok(const Graph& graph, const Node& node, const Shape& kernel) {
  const Shape& xs = graph.type(node.input(0)).shape;
  if (xs.size() < 3 || xs.size() > 5) return false;
  return forward_window(node, Shape(xs.begin() + 2, xs.end()), kernel).ok();
}

bool op_supported(const Graph& graph, const Node& node) {
  const std::string& op = node.op_type;
  auto in_shape = [&](std::size_t i) -> const Shape& { return graph.type(node.input(i)).shape; };
  auto out_shape = [&]() -> const Shape& { return graph.type(node.outputs[0]).shape; };
  auto rank_of = [&](std::size_t i) { return static_cast<int>(in_shape(i).size()); };
  auto is_const = [&](std::size_t i) { return constant_of(graph, node.input(i)) != nullptr; };
  if (std::find(unary_ops().begin(), unary_ops().end(), op) != unary_ops().end()) {
    if (op == "Clip") {
      for (std::size_t i = 1; i < node.inputs.size(); ++i) {
        if (node.input(i) != kNoValue && !constant_scalar(graph, node.input(i))) return false;
      }
    }
    return in_shape(0) == out_shape();
  }
  if (std::find(binary_ops().begin(), binary_ops().end(), op) != binary_ops().end()) {
    return node.inputs.size() == 2 && static_cast<int>(out_shape().size()) >= rank_of(0) &&
           static_cast<int>(out_shape().size()) >= rank_of(1);
  }
  if (op == "Conv") {
    if (rank_of(0) != 4 || !is_const(1)) return false;
    if (node.input(2) != kNoValue && !is_const(2)) return false;
    const Shape& ws = in_shape(1);
    const std::int64_t group = node.attributes.get_int("group", 1);
    if (group < 1 || in_shape(0)[1] != ws[1] * group || out_shape()[1] % group != 0) return false;
    // Depthwise and grouped convolutions, and small dense ones (a stem over
    // three channels): dense ones with long reductions are GEMMs, which
    // the libraries block for cache and registers.
    const std::int64_t taps = ws[1] * ws[2] * ws[3];
    if (group == 1 && taps > kMaxDenseTaps) return false;
    return window_ok(graph, node, Shape(ws.begin() + 2, ws.end()));
  }
  if (op == "MaxPool" || op == "AveragePool") {
    if (rank_of(0) != 4 || node.outputs.size() > 1 || !node.attributes.has("kernel_shape"))
      return false;
    if (node.attributes.get_int("storage_order", 0) != 0) return false;
    return window_ok(graph, node, node.attributes.get_ints("kernel_shape"));
  }
  if (op == "GlobalAveragePool" || op == "GlobalMaxPool") return rank_of(0) >= 3;
  if (op == "ReduceMean" || op == "ReduceSum" || op == "ReduceMax" || op == "ReduceMin" ||
      op == "ReduceSumSquare" || op == "ReduceL2") {
    if (node.input(1) != kNoValue && !constant_ints(graph, node.input(1))) return false;
    std::vector<std::int64_t> axes;
    if (auto given = constant_ints(graph, node.input(1))) axes = *given;
    if (node.attributes.has("axes")) axes = node.attributes.get_ints("axes");
    if (axes.empty() && node.attributes.get_int("noop_with_empty_axes", 0) != 0) return false;
    for (std::int64_t a : axes) {
      if (a < -rank_of(0) || a >= rank_of(0)) return false;
    }
    return true;
  }
  // Small matrix products (attention scores over a head, squeeze-and-
  // excitation's dense layers); the large ones belong to the GEMM libraries.
  auto small_product = [&](std::int64_t k) {
    std::int64_t outputs = 1;
    for (std::int64_t d : out_shape()) outputs *= d;
    return k <= kMaxProductDepth && outputs * k <= kMaxProductWork;
  };
  if (op == "MatMul") {
    return rank_of(0) >= 2 && rank_of(1) >= 2 &&
           in_shape(0).back() == in_shape(1)[in_shape(1).size() - 2] &&
           small_product(in_shape(0).back());
  }
  if (op == "Gemm") {
    if (rank_of(0) != 2 || rank_of(1) != 2 || (node.input(2) != kNoValue && rank_of(2) > 2)) {
      return false;
    }
    return small_product(node.attributes.get_int("transA", 0) != 0 ? in_shape(0)[0]
                                                                   : in_shape(0)[1]);
  }
  if (op == "Softmax") {
    // Opset 13's per-axis Softmax; earlier opsets agree with it on the last axis.
    const std::int64_t axis = node.attributes.get_int("axis", -1);
    return graph.opset >= 13 || normalized_axis(axis, rank_of(0)) == rank_of(0) - 1;
  }
  if (op == "LayerNormalization") {
    for (std::size_t k = 1; k < node.outputs.size(); ++k) {
      if (node.outputs[k] != kNoValue) return false;
    }
    return node.attributes.get_int("stash_type", 1) == 1;
  }
  if (op == "BatchNormalization") {
    if (node.outputs.size() > 1 || rank_of(0) < 2) return false;
    for (std::size_t i = 1; i < 5; ++i) {
      if (node.input(i) == kNoValue || in_shape(i).size() != 1) return false;
    }
    return node.attributes.get_int("training_mode", 0) == 0;
  }
  if (op == "Reshape" || op == "Flatten" || op == "Squeeze" || op == "Unsqueeze") return true;
  if (op == "Transpose") return true;
  if (op == "Concat") return true;
  if (op == "Split") return true;
  if (op == "Slice") {
    for (std::size_t i = 1; i < node.inputs.size(); ++i) {
      if (node.input(i) != kNoValue && !constant_ints(graph, node.input(i))) return false;
    }
    return node.input(1) != kNoValue && node.input(2) != kNoValue;
  }
  if (op == "Pad") {
    const std::string mode = node.attributes.get_string("mode", "constant");
    if (mode != "constant" && mode != "edge" && mode != "reflect") return false;
    if (graph.opset >= 11) {
      auto pads = constant_ints(graph, node.input(1));
      if (!pads || pads->size() != 2 * static_cast<std::size_t>(rank_of(0))) return false;
      if (node.input(2) != kNoValue && !constant_scalar(graph, node.input(2))) return false;
      if (node.input(3) != kNoValue) return false;
      if (mode != "constant") {
        for (std::int64_t p : *pads) {
          if (p < 0) return false;
        }
      }
    }
    return true;
  }
  return false;
}

}  // namespace

bool supports_node(const Graph& graph, const Node& node) {
  if (!node.domain.empty()) return false;
  for (std::size_t i = 0; i < node.inputs.size(); ++i) {
    const ValueId id = node.inputs[i];
    if (id == kNoValue) continue;
    if (is_parameter_input(node, i)) continue;
    if (!is_float_value(graph, id) || !static_shape(graph.type(id))) return false;
  }
  if (node.outputs.empty()) return false;
  for (ValueId id : node.outputs) {
    if (id == kNoValue) continue;
    if (!is_float_value(graph, id) || !static_shape(graph.type(id))) return false;
  }
  try {
    return op_supported(graph, node);
  } catch (const Error&) {
    // An attribute of the wrong kind: not this backend's to run.
    return false;
  }
}

std::vector<std::string> supported_ops() {
  std::vector<std::string> ops = unary_ops();
  ops.insert(ops.end(), binary_ops().begin(), binary_ops().end());
  for (const char* op : {"Conv",
                         "MaxPool",
                         "AveragePool",
                         "GlobalAveragePool",
                         "GlobalMaxPool",
                         "ReduceMean",
                         "ReduceSum",
                         "ReduceMax",
                         "ReduceMin",
                         "ReduceSumSquare",
                         "ReduceL2",
                         "MatMul",
                         "Gemm",
                         "Softmax",
                         "LayerNormalization",
                         "BatchNormalization",
                         "Reshape",
                         "Flatten",
                         "Squeeze",
                         "Unsqueeze",
                         "Transpose",
                         "Concat",
                         "Split",
                         "Slice",
                         "Pad"}) {
    ops.emplace_back(op);
  }
  std::sort(ops.begin(), ops.end());
  return ops;
}

Result<Lowered> lower(const Graph& partition) {
  for (const Node& node : partition.nodes()) {
    if (!supports_node(partition, node)) {
      return Failure{fmt::format("Halide cannot run {} '{}'", node.op_type, node.name)};
    }
  }
  try {
    return Lowerer(partition).run();
  } catch (const Halide::Error& error) {
    return Failure{fmt::format("Halide rejected the region: {}", error.what())};
  } catch (const Error& error) {
    return Failure{error.what()};
  }
}

}  // namespace collage::halide
