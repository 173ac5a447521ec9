#include "collage/backends/halide/lowering.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <limits>
#include <optional>

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

// ---------------------------------------------------------------- lowering

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

class Lowerer {
 public:
  explicit Lowerer(const Graph& graph) : graph_(graph), funcs_(graph.num_values()) {}

  Lowered run() {
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

 private:
  // ---- values

  const Shape& shape(ValueId id) const { return graph_.type(id).shape; }
  int rank(ValueId id) const { return static_cast<int>(shape(id).size()); }

  Func& func(ValueId id) {
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

  // Reads value `id` at an ONNX-ordered index.
  Expr at(ValueId id, const std::vector<Expr>& index) { return call(func(id), index); }

  // Calls `f` at an ONNX-ordered index.
  static Expr call(const Func& f, const std::vector<Expr>& index) {
    return f(std::vector<Expr>(index.rbegin(), index.rend()));
  }

  // Reads `id` at `index`, or `outside` where the index leaves the tensor.
  // Only the axes in `checked` can leave it.
  Expr at_or(ValueId id, const std::vector<Expr>& index, const std::vector<bool>& checked,
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

  // Reads `id` broadcast to an output of rank `out_rank` (numpy rules).
  Expr broadcast_at(ValueId id, const std::vector<Var>& out) {
    const int r = rank(id);
    const int offset = static_cast<int>(out.size()) - r;
    std::vector<Expr> index;
    for (int i = 0; i < r; ++i) {
      index.push_back(shape(id)[static_cast<std::size_t>(i)] == 1 ? Expr(0)
                                                                  : Expr(out[i + offset]));
    }
    return at(id, index);
  }

  static std::vector<Var> vars(std::size_t rank) {
    std::vector<Var> v;
    for (std::size_t i = 0; i < rank; ++i) v.emplace_back(fmt::format("d{}", i));
    return v;
  }
  static std::vector<Var> reversed(const std::vector<Var>& v) { return {v.rbegin(), v.rend()}; }
  static std::vector<Expr> exprs(const std::vector<Var>& v) { return {v.begin(), v.end()}; }

  Stage& stage_of(const Func& f) {
    for (Stage& stage : stages_) {
      if (stage.func.name() == f.name()) return stage;
    }
    throw Error("internal: a Func without a stage");
  }

  Func new_func(const std::string& hint, const Shape& shape, bool materialize) {
    Func f(fmt::format("{}_{}", hint, stages_.size()));
    stages_.push_back(Stage{f, shape, materialize, false});
    return f;
  }

  // A pure Func of `shape` defined as `body` over its ONNX-ordered index.
  Func pure(const std::string& hint, const Shape& shape,
            const std::function<Expr(const std::vector<Var>&)>& body, bool materialize = false) {
    Func f = new_func(hint, shape, materialize);
    const std::vector<Var> v = vars(shape.size());
    f(reversed(v)) = body(v);
    return f;
  }

  // Defines value `id` (an op output) as `body` over its ONNX-ordered index.
  void define(ValueId id, const std::function<Expr(const std::vector<Var>&)>& body,
              const std::string& hint) {
    funcs_[static_cast<std::size_t>(id)] = pure(hint, shape(id), body);
  }

  // A sum-like reduction: init, then `update` accumulated over `domain`.
  enum class Combine { kSum, kMax, kMin };
  Func reduce(const std::string& hint, const Shape& out_shape, Halide::RDom domain,
              const std::function<Expr(const std::vector<Var>&, const Halide::RDom&)>& term,
              Combine combine, Expr init) {
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

  void add_param(ValueId id) {
    const Shape& s = shape(id);
    Halide::ImageParam param(Halide::Float(32), static_cast<int>(s.size()),
                             fmt::format("p{}", params_.size()));
    set_dense_layout(param, s);
    params_.push_back(param);
    param_values_.push_back(id);
    funcs_[static_cast<std::size_t>(id)] =
        pure("in", s, [&](const std::vector<Var>& v) { return param(reversed(v)); });
  }

  void define_constant(ValueId id) {
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

  Func copy_of(ValueId id) {
    return pure("copy", shape(id), [&](const std::vector<Var>& v) { return at(id, exprs(v)); });
  }

  // Reading a parameter or a constant costs nothing: only computed values
  // are materialized.
  void materialize(ValueId id) {
    if (graph_.value(id).producer != kNoNode) stage_of(func(id)).materialize = true;
  }

  // ---- ops

  void lower_node(const Node& node);
  void lower_unary(const Node& node);
  void lower_binary(const Node& node);
  void lower_conv(const Node& node);
  void lower_pool(const Node& node);
  void lower_global_pool(const Node& node);
  void lower_reduce(const Node& node);
  void lower_matmul(const Node& node);
  void lower_gemm(const Node& node);
  void lower_softmax(const Node& node);
  void lower_layer_norm(const Node& node);
  void lower_batch_norm(const Node& node);
  void lower_reshape(const Node& node);
  void lower_transpose(const Node& node);
  void lower_concat(const Node& node);
  void lower_split(const Node& node);
  void lower_slice(const Node& node);
  void lower_pad(const Node& node);

  const Graph& graph_;
  std::vector<Func> funcs_;
  std::vector<Halide::ImageParam> params_;
  std::vector<ValueId> param_values_;
  std::vector<Stage> stages_;
};

// ---- elementwise

Expr sigmoid(const Expr& x) { return 1.0f / (1.0f + Halide::exp(-x)); }

Expr unary_expr(const Node& node, const Expr& x, const Graph& graph) {
  const std::string& op = node.op_type;
  const Attributes& a = node.attributes;
  if (op == "Relu") return Halide::max(x, 0.0f);
  if (op == "LeakyRelu") return Halide::select(x >= 0.0f, x, x * a.get_float("alpha", 0.01f));
  if (op == "Sigmoid") return sigmoid(x);
  if (op == "HardSigmoid") {
    return Halide::clamp(x * a.get_float("alpha", 0.2f) + a.get_float("beta", 0.5f), 0.0f, 1.0f);
  }
  if (op == "HardSwish") return x * Halide::clamp(x * (1.0f / 6.0f) + 0.5f, 0.0f, 1.0f);
  if (op == "Swish") return x * sigmoid(x * a.get_float("alpha", 1.0f));
  if (op == "Tanh") return Halide::tanh(x);
  if (op == "Exp") return Halide::exp(x);
  if (op == "Log") return Halide::log(x);
  if (op == "Sqrt") return Halide::sqrt(x);
  if (op == "Reciprocal") return 1.0f / x;
  if (op == "Neg") return -x;
  if (op == "Abs") return Halide::abs(x);
  if (op == "Floor") return Halide::floor(x);
  if (op == "Ceil") return Halide::ceil(x);
  if (op == "Erf") return Halide::erf(x);
  if (op == "Identity") return x;
  if (op == "Elu") {
    const float alpha = a.get_float("alpha", 1.0f);
    return Halide::select(x >= 0.0f, x, alpha * (Halide::exp(x) - 1.0f));
  }
  if (op == "Softplus") {
    // log(1 + e^x) without overflow: max(x, 0) + log(1 + e^-|x|).
    return Halide::max(x, 0.0f) + Halide::log(1.0f + Halide::exp(-Halide::abs(x)));
  }
  if (op == "Gelu") {
    if (a.get_string("approximate", "none") == "tanh") {
      const Expr inner = 0.7978845608028654f * (x + 0.044715f * x * x * x);
      return 0.5f * x * (1.0f + Halide::tanh(inner));
    }
    return 0.5f * x * (1.0f + Halide::erf(x * 0.7071067811865476f));
  }
  if (op == "Clip") {
    Expr y = x;
    float lo = -std::numeric_limits<float>::infinity();
    float hi = std::numeric_limits<float>::infinity();
    if (node.inputs.size() > 1 || graph.opset >= 11) {
      if (auto v = constant_scalar(graph, node.input(1))) lo = *v;
      if (auto v = constant_scalar(graph, node.input(2))) hi = *v;
    } else {
      lo = a.get_float("min", lo);
      hi = a.get_float("max", hi);
    }
    if (lo > -std::numeric_limits<float>::infinity()) y = Halide::max(y, lo);
    if (hi < std::numeric_limits<float>::infinity()) y = Halide::min(y, hi);
    return y;
  }
  throw Error(fmt::format("no Halide lowering for {}", op));
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

void Lowerer::lower_unary(const Node& node) {
  const ValueId x = node.input(0);
  define(
      node.outputs[0],
      [&](const std::vector<Var>& v) { return unary_expr(node, at(x, exprs(v)), graph_); },
      node.op_type);
}

void Lowerer::lower_binary(const Node& node) {
  const ValueId a = node.input(0);
  const ValueId b = node.input(1);
  const std::string& op = node.op_type;
  define(
      node.outputs[0],
      [&](const std::vector<Var>& v) {
        const Expr x = broadcast_at(a, v);
        const Expr y = broadcast_at(b, v);
        if (op == "Add") return x + y;
        if (op == "Sub") return x - y;
        if (op == "Mul") return x * y;
        if (op == "Div") return x / y;
        if (op == "Max") return Halide::max(x, y);
        if (op == "Min") return Halide::min(x, y);
        if (op == "PRelu") return Halide::select(x >= 0.0f, x, x * y);
        // Pow: integral constant exponents as products (exact, like std::pow).
        if (auto e = constant_scalar(graph_, b)) {
          if (*e == 2.0f) return x * x;
          if (*e == 3.0f) return x * x * x;
          if (*e == 1.0f) return x;
          if (*e == 0.5f) return Halide::sqrt(x);
        }
        return Halide::pow(x, y);
      },
      op);
}

// ---- windows

void Lowerer::lower_conv(const Node& node) {
  const ValueId x = node.input(0);
  const ValueId w = node.input(1);
  const ValueId b = node.input(2);
  const ValueId y = node.outputs[0];
  const Shape& xs = shape(x);
  const Shape& ws = shape(w);
  const Window window = forward_window_or_throw(node, Shape(xs.begin() + 2, xs.end()),
                                                Shape(ws.begin() + 2, ws.end()));
  const int spatial = static_cast<int>(window.rank());
  const std::int64_t group = node.attributes.get_int("group", 1);
  const std::int64_t per_group_in = ws[1];
  const std::int64_t per_group_out = shape(y)[1] / group;
  materialize(x);
  // Domain: input channel of the group, then the kernel taps.
  std::vector<Halide::Range> ranges{{0, static_cast<int>(per_group_in)}};
  for (int s = 0; s < spatial; ++s) ranges.emplace_back(0, static_cast<int>(ws[2 + s]));
  Halide::RDom r(ranges);
  Func f = reduce(
      "conv", shape(y), r,
      [&](const std::vector<Var>& v, const Halide::RDom& d) {
        const Expr c_in =
            (v[1] / static_cast<int>(per_group_out)) * static_cast<int>(per_group_in) + d[0];
        std::vector<Expr> xi{v[0], c_in};
        std::vector<bool> checked{false, false};
        std::vector<Expr> wi{v[1], d[0]};
        for (int s = 0; s < spatial; ++s) {
          const WindowAxis& axis = window.axes[static_cast<std::size_t>(s)];
          xi.push_back(v[2 + s] * static_cast<int>(axis.stride) - static_cast<int>(axis.pad_begin) +
                       d[1 + s] * static_cast<int>(axis.dilation));
          checked.push_back(axis.pad_begin > 0 || axis.end_padding_reached() > 0);
          wi.push_back(d[1 + s]);
        }
        return at(w, wi) * at_or(x, xi, checked, 0.0f);
      },
      Combine::kSum, 0.0f);
  if (b == kNoValue) {
    funcs_[static_cast<std::size_t>(y)] = f;
    return;
  }
  define(
      y, [&](const std::vector<Var>& v) { return f(reversed(v)) + at(b, {v[1]}); }, "bias");
}

void Lowerer::lower_pool(const Node& node) {
  const ValueId x = node.input(0);
  const ValueId y = node.outputs[0];
  const Shape& xs = shape(x);
  Window window = forward_window_or_throw(node, Shape(xs.begin() + 2, xs.end()),
                                          node.attributes.get_ints("kernel_shape"));
  const int spatial = static_cast<int>(window.rank());
  // The output size is the graph's (see native's pools on ceil_mode).
  for (int s = 0; s < spatial; ++s)
    window.axes[static_cast<std::size_t>(s)].output = shape(y)[2 + s];
  const bool is_max = node.op_type == "MaxPool";
  materialize(x);
  std::vector<Halide::Range> ranges;
  for (const WindowAxis& axis : window.axes) ranges.emplace_back(0, static_cast<int>(axis.kernel));
  Halide::RDom r(ranges);
  auto position = [&](const std::vector<Var>& v, const Halide::RDom& d, int s) {
    const WindowAxis& axis = window.axes[static_cast<std::size_t>(s)];
    return v[2 + s] * static_cast<int>(axis.stride) - static_cast<int>(axis.pad_begin) +
           d[s] * static_cast<int>(axis.dilation);
  };
  std::vector<bool> checked{false, false};
  for (const WindowAxis& axis : window.axes) {
    checked.push_back(axis.pad_begin > 0 || axis.end_padding_reached() > 0);
  }
  const float lowest = -std::numeric_limits<float>::infinity();
  Func acc = reduce(
      is_max ? "maxpool" : "avgpool", shape(y), r,
      [&](const std::vector<Var>& v, const Halide::RDom& d) {
        std::vector<Expr> xi{v[0], v[1]};
        for (int s = 0; s < spatial; ++s) xi.push_back(position(v, d, s));
        return at_or(x, xi, checked, is_max ? Expr(lowest) : Expr(0.0f));
      },
      is_max ? Combine::kMax : Combine::kSum, is_max ? Expr(lowest) : Expr(0.0f));
  if (is_max) {
    funcs_[static_cast<std::size_t>(y)] = acc;
    return;
  }
  // Divide by the taps inside the input (or the padded input).
  const bool include_pad = node.attributes.get_int("count_include_pad", 0) != 0;
  define(
      y,
      [&](const std::vector<Var>& v) {
        Expr count = 1;
        for (int s = 0; s < spatial; ++s) {
          const WindowAxis& axis = window.axes[static_cast<std::size_t>(s)];
          const Expr first =
              v[2 + s] * static_cast<int>(axis.stride) - static_cast<int>(axis.pad_begin);
          const int lo = include_pad ? -static_cast<int>(axis.pad_begin) : 0;
          const int hi = static_cast<int>(include_pad ? axis.input + axis.pad_end : axis.input);
          Expr taps = 0;
          if (axis.dilation == 1) {
            taps = Halide::max(
                0, Halide::min(first + static_cast<int>(axis.kernel), hi) - Halide::max(first, lo));
          } else {
            for (std::int64_t t = 0; t < axis.kernel; ++t) {
              const Expr p = first + static_cast<int>(t * axis.dilation);
              taps = taps + Halide::select(p >= lo && p < hi, 1, 0);
            }
          }
          count = count * taps;
        }
        return acc(reversed(v)) / Halide::cast<float>(Halide::max(count, 1));
      },
      "avg");
}

void Lowerer::lower_global_pool(const Node& node) {
  const ValueId x = node.input(0);
  const ValueId y = node.outputs[0];
  const Shape& xs = shape(x);
  std::vector<Halide::Range> ranges;
  std::int64_t count = 1;
  for (std::size_t s = 2; s < xs.size(); ++s) {
    ranges.emplace_back(0, static_cast<int>(xs[s]));
    count *= xs[s];
  }
  Halide::RDom r(ranges);
  const bool is_max = node.op_type == "GlobalMaxPool";
  Func acc = reduce(
      "gpool", shape(y), r,
      [&](const std::vector<Var>& v, const Halide::RDom& d) {
        std::vector<Expr> xi{v[0], v[1]};
        for (std::size_t s = 2; s < xs.size(); ++s) xi.push_back(d[static_cast<int>(s - 2)]);
        return at(x, xi);
      },
      is_max ? Combine::kMax : Combine::kSum,
      is_max ? Expr(-std::numeric_limits<float>::infinity()) : Expr(0.0f));
  if (is_max) {
    funcs_[static_cast<std::size_t>(y)] = acc;
    return;
  }
  const float scale = 1.0f / static_cast<float>(count);
  define(
      y, [&](const std::vector<Var>& v) { return acc(reversed(v)) * scale; }, "gavg");
}

// ---- reductions

std::vector<bool> reduced_axes(const Graph& graph, const Node& node, int rank) {
  std::vector<std::int64_t> axes;
  if (auto from_input = constant_ints(graph, node.input(1))) {
    axes = *from_input;
  } else if (node.attributes.has("axes")) {
    axes = node.attributes.get_ints("axes");
  }
  std::vector<bool> reduced(static_cast<std::size_t>(rank), axes.empty());
  for (std::int64_t axis : axes)
    reduced[static_cast<std::size_t>(normalized_axis(axis, rank))] = true;
  return reduced;
}

void Lowerer::lower_reduce(const Node& node) {
  const ValueId x = node.input(0);
  const ValueId y = node.outputs[0];
  const int r = rank(x);
  const std::vector<bool> reduced = reduced_axes(graph_, node, r);
  const bool keep = node.attributes.get_int("keepdims", 1) != 0;
  std::vector<Halide::Range> ranges;
  std::int64_t count = 1;
  for (int i = 0; i < r; ++i) {
    if (!reduced[static_cast<std::size_t>(i)]) continue;
    ranges.emplace_back(0, static_cast<int>(shape(x)[static_cast<std::size_t>(i)]));
    count *= shape(x)[static_cast<std::size_t>(i)];
  }
  Halide::RDom d(ranges);
  const std::string& op = node.op_type;
  const bool is_max = op == "ReduceMax";
  const bool is_min = op == "ReduceMin";
  const bool squares = op == "ReduceSumSquare" || op == "ReduceL2";
  Func acc = reduce(
      "reduce", shape(y), d,
      [&](const std::vector<Var>& v, const Halide::RDom& dom) {
        std::vector<Expr> xi;
        int next_out = 0;
        int next_r = 0;
        for (int i = 0; i < r; ++i) {
          if (reduced[static_cast<std::size_t>(i)]) {
            xi.push_back(dom[next_r++]);
            if (keep) ++next_out;
          } else {
            xi.push_back(v[next_out++]);
          }
        }
        const Expr value = at(x, xi);
        return squares ? value * value : value;
      },
      is_max ? Combine::kMax : (is_min ? Combine::kMin : Combine::kSum),
      is_max ? Expr(-std::numeric_limits<float>::infinity())
             : (is_min ? Expr(std::numeric_limits<float>::infinity()) : Expr(0.0f)));
  if (op == "ReduceMean") {
    const float scale = 1.0f / static_cast<float>(count);
    define(
        y, [&](const std::vector<Var>& v) { return acc(reversed(v)) * scale; }, "mean");
  } else if (op == "ReduceL2") {
    define(
        y, [&](const std::vector<Var>& v) { return Halide::sqrt(acc(reversed(v))); }, "l2");
  } else {
    funcs_[static_cast<std::size_t>(y)] = acc;
  }
}

// ---- matrix products

void Lowerer::lower_matmul(const Node& node) {
  const ValueId a = node.input(0);
  const ValueId b = node.input(1);
  const ValueId y = node.outputs[0];
  const int ra = rank(a);
  const int rb = rank(b);
  const int ry = rank(y);
  const std::int64_t k = shape(a).back();
  Halide::RDom d(0, static_cast<int>(k));
  Func f = reduce(
      "matmul", shape(y), d,
      [&](const std::vector<Var>& v, const Halide::RDom& dom) {
        // Batch dimensions broadcast from the left.
        std::vector<Expr> ai;
        std::vector<Expr> bi;
        for (int i = 0; i < ra - 2; ++i) {
          const int out = i + (ry - ra);
          ai.push_back(shape(a)[static_cast<std::size_t>(i)] == 1 ? Expr(0) : Expr(v[out]));
        }
        for (int i = 0; i < rb - 2; ++i) {
          const int out = i + (ry - rb);
          bi.push_back(shape(b)[static_cast<std::size_t>(i)] == 1 ? Expr(0) : Expr(v[out]));
        }
        ai.push_back(v[ry - 2]);
        ai.push_back(dom.x);
        bi.push_back(dom.x);
        bi.push_back(v[ry - 1]);
        return at(a, ai) * at(b, bi);
      },
      Combine::kSum, 0.0f);
  funcs_[static_cast<std::size_t>(y)] = f;
}

void Lowerer::lower_gemm(const Node& node) {
  const ValueId a = node.input(0);
  const ValueId b = node.input(1);
  const ValueId c = node.input(2);
  const ValueId y = node.outputs[0];
  const bool trans_a = node.attributes.get_int("transA", 0) != 0;
  const bool trans_b = node.attributes.get_int("transB", 0) != 0;
  const float alpha = node.attributes.get_float("alpha", 1.0f);
  const float beta = node.attributes.get_float("beta", 1.0f);
  const std::int64_t k = trans_a ? shape(a)[0] : shape(a)[1];
  Halide::RDom d(0, static_cast<int>(k));
  Func f = reduce(
      "gemm", shape(y), d,
      [&](const std::vector<Var>& v, const Halide::RDom& dom) {
        const Expr av = trans_a ? at(a, {dom.x, v[0]}) : at(a, {v[0], dom.x});
        const Expr bv = trans_b ? at(b, {v[1], dom.x}) : at(b, {dom.x, v[1]});
        return av * bv;
      },
      Combine::kSum, 0.0f);
  if (c == kNoValue && alpha == 1.0f) {
    funcs_[static_cast<std::size_t>(y)] = f;
    return;
  }
  define(
      y,
      [&](const std::vector<Var>& v) {
        Expr out = f(reversed(v));
        if (alpha != 1.0f) out = out * alpha;
        if (c != kNoValue) {
          Expr cv = broadcast_at(c, v);
          if (beta != 1.0f) cv = cv * beta;
          out = out + cv;
        }
        return out;
      },
      "gemm_out");
}

// ---- normalizations

void Lowerer::lower_softmax(const Node& node) {
  const ValueId x = node.input(0);
  const ValueId y = node.outputs[0];
  const int r = rank(x);
  const int axis = normalized_axis(node.attributes.get_int("axis", -1), r);
  Shape stat_shape = shape(x);
  stat_shape[static_cast<std::size_t>(axis)] = 1;
  Halide::RDom d(0, static_cast<int>(shape(x)[static_cast<std::size_t>(axis)]));
  auto along = [&](const std::vector<Var>& v, Expr position) {
    std::vector<Expr> index = exprs(v);
    index[static_cast<std::size_t>(axis)] = std::move(position);
    return index;
  };
  Func mx = reduce(
      "smax", stat_shape, d,
      [&](const std::vector<Var>& v, const Halide::RDom& dom) { return at(x, along(v, dom.x)); },
      Combine::kMax, -std::numeric_limits<float>::infinity());
  // exp(x - max) is read twice (the sum and the quotient): materialized.
  Func ex = pure(
      "sexp", shape(x),
      [&](const std::vector<Var>& v) {
        return Halide::exp(at(x, exprs(v)) - call(mx, along(v, 0)));
      },
      /*materialize=*/true);
  Func sum = reduce(
      "ssum", stat_shape, d,
      [&](const std::vector<Var>& v, const Halide::RDom& dom) { return call(ex, along(v, dom.x)); },
      Combine::kSum, 0.0f);
  define(
      y, [&](const std::vector<Var>& v) { return ex(reversed(v)) / call(sum, along(v, 0)); },
      "softmax");
}

void Lowerer::lower_layer_norm(const Node& node) {
  const ValueId x = node.input(0);
  const ValueId scale = node.input(1);
  const ValueId bias = node.input(2);
  const ValueId y = node.outputs[0];
  const int r = rank(x);
  const int axis = normalized_axis(node.attributes.get_int("axis", -1), r);
  const float epsilon = node.attributes.get_float("epsilon", 1e-5f);
  Shape stat_shape = shape(x);
  std::vector<Halide::Range> ranges;
  std::int64_t count = 1;
  for (int i = axis; i < r; ++i) {
    ranges.emplace_back(0, static_cast<int>(stat_shape[static_cast<std::size_t>(i)]));
    count *= stat_shape[static_cast<std::size_t>(i)];
    stat_shape[static_cast<std::size_t>(i)] = 1;
  }
  Halide::RDom d(ranges);
  const float inv_count = 1.0f / static_cast<float>(count);
  auto normalized_index = [&](const std::vector<Var>& v, const Halide::RDom& dom) {
    std::vector<Expr> index = exprs(v);
    for (int i = axis; i < r; ++i) index[static_cast<std::size_t>(i)] = dom[i - axis];
    return index;
  };
  auto stat_at = [&](const Func& f, const std::vector<Var>& v) {
    std::vector<Expr> index = exprs(v);
    for (int i = axis; i < r; ++i) index[static_cast<std::size_t>(i)] = 0;
    return call(f, index);
  };
  Func sum = reduce(
      "lnsum", stat_shape, d,
      [&](const std::vector<Var>& v, const Halide::RDom& dom) {
        return at(x, normalized_index(v, dom));
      },
      Combine::kSum, 0.0f);
  Func mean = pure("lnmean", stat_shape,
                   [&](const std::vector<Var>& v) { return sum(reversed(v)) * inv_count; });
  Func sq = reduce(
      "lnvar", stat_shape, d,
      [&](const std::vector<Var>& v, const Halide::RDom& dom) {
        const Expr centered = at(x, normalized_index(v, dom)) - mean(reversed(v));
        return centered * centered;
      },
      Combine::kSum, 0.0f);
  Func inv_std = pure("lnrstd", stat_shape, [&](const std::vector<Var>& v) {
    return 1.0f / Halide::sqrt(sq(reversed(v)) * inv_count + epsilon);
  });
  define(
      y,
      [&](const std::vector<Var>& v) {
        std::vector<Expr> tail;
        for (int i = axis; i < r; ++i) tail.push_back(v[i]);
        auto param_at = [&](ValueId p) {
          // scale and bias broadcast to the normalized shape.
          const int pr = rank(p);
          std::vector<Expr> index;
          for (int i = 0; i < pr; ++i) {
            const std::size_t source =
                tail.size() - static_cast<std::size_t>(pr) + static_cast<std::size_t>(i);
            index.push_back(shape(p)[static_cast<std::size_t>(i)] == 1 ? Expr(0) : tail[source]);
          }
          return at(p, index);
        };
        Expr out = (at(x, exprs(v)) - stat_at(mean, v)) * stat_at(inv_std, v) * param_at(scale);
        if (bias != kNoValue) out = out + param_at(bias);
        return out;
      },
      "layernorm");
}

void Lowerer::lower_batch_norm(const Node& node) {
  const ValueId x = node.input(0);
  const float epsilon = node.attributes.get_float("epsilon", 1e-5f);
  define(
      node.outputs[0],
      [&](const std::vector<Var>& v) {
        const Expr c = v[1];
        const Expr scale = at(node.input(1), {c}) / Halide::sqrt(at(node.input(4), {c}) + epsilon);
        return (at(x, exprs(v)) - at(node.input(3), {c})) * scale + at(node.input(2), {c});
      },
      "batchnorm");
}

// ---- data movement

// Reshape, Flatten, Squeeze, Unsqueeze: the same elements in the same order.
void Lowerer::lower_reshape(const Node& node) {
  const ValueId x = node.input(0);
  const ValueId y = node.outputs[0];
  if (shape(x) == shape(y)) {
    define(
        y, [&](const std::vector<Var>& v) { return at(x, exprs(v)); }, "reshape");
    return;
  }
  define(
      y,
      [&](const std::vector<Var>& v) {
        Expr flat = 0;
        for (std::size_t i = 0; i < v.size(); ++i)
          flat = flat * static_cast<int>(shape(y)[i]) + v[i];
        const Shape& xs = shape(x);
        std::vector<Expr> index(xs.size());
        for (std::size_t i = xs.size(); i-- > 0;) {
          index[i] = i == 0 ? flat : flat % static_cast<int>(xs[i]);
          if (i > 0) flat = flat / static_cast<int>(xs[i]);
        }
        return at(x, index);
      },
      "reshape");
}

void Lowerer::lower_transpose(const Node& node) {
  const ValueId x = node.input(0);
  const int r = rank(x);
  std::vector<std::int64_t> perm = node.attributes.get_ints("perm", {});
  if (perm.empty()) {
    for (int i = r - 1; i >= 0; --i) perm.push_back(i);
  }
  define(
      node.outputs[0],
      [&](const std::vector<Var>& v) {
        std::vector<Expr> index(static_cast<std::size_t>(r));
        for (int i = 0; i < r; ++i)
          index[static_cast<std::size_t>(perm[static_cast<std::size_t>(i)])] = v[i];
        return at(x, index);
      },
      "transpose");
}

void Lowerer::lower_concat(const Node& node) {
  const ValueId y = node.outputs[0];
  const int axis = normalized_axis(node.attributes.get_int("axis"), rank(y));
  define(
      y,
      [&](const std::vector<Var>& v) {
        // Each later input takes over from the position where it starts.
        std::vector<std::pair<ValueId, std::int64_t>> parts;
        std::int64_t offset = 0;
        for (ValueId in : node.inputs) {
          if (shape(in)[static_cast<std::size_t>(axis)] == 0) continue;
          parts.emplace_back(in, offset);
          offset += shape(in)[static_cast<std::size_t>(axis)];
        }
        Expr out;
        for (const auto& [in, start] : parts) {
          std::vector<Expr> index = exprs(v);
          const Expr extent = static_cast<int>(shape(in)[static_cast<std::size_t>(axis)]);
          index[static_cast<std::size_t>(axis)] =
              Halide::clamp(v[axis] - static_cast<int>(start), 0, extent - 1);
          const Expr value = at(in, index);
          out = out.defined() ? Halide::select(v[axis] >= static_cast<int>(start), value, out)
                              : value;
        }
        return out;
      },
      "concat");
}

void Lowerer::lower_split(const Node& node) {
  const ValueId x = node.input(0);
  const int axis = normalized_axis(node.attributes.get_int("axis", 0), rank(x));
  std::int64_t offset = 0;
  for (ValueId out : node.outputs) {
    if (out == kNoValue) continue;
    const std::int64_t start = offset;
    define(
        out,
        [&](const std::vector<Var>& v) {
          std::vector<Expr> index = exprs(v);
          index[static_cast<std::size_t>(axis)] = v[axis] + static_cast<int>(start);
          return at(x, index);
        },
        "split");
    offset += shape(out)[static_cast<std::size_t>(axis)];
  }
}

void Lowerer::lower_slice(const Node& node) {
  const ValueId x = node.input(0);
  const int r = rank(x);
  const std::vector<std::int64_t> starts = *constant_ints(graph_, node.input(1));
  std::vector<std::int64_t> axes;
  if (auto given = constant_ints(graph_, node.input(3))) {
    axes = *given;
  } else {
    for (std::size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<std::int64_t>(i));
  }
  std::vector<std::int64_t> steps(starts.size(), 1);
  if (auto given = constant_ints(graph_, node.input(4))) steps = *given;
  std::vector<std::int64_t> first(static_cast<std::size_t>(r), 0);
  std::vector<std::int64_t> step(static_cast<std::size_t>(r), 1);
  for (std::size_t i = 0; i < axes.size(); ++i) {
    const int a = normalized_axis(axes[i], r);
    const std::int64_t dim = shape(x)[static_cast<std::size_t>(a)];
    std::int64_t s = starts[i] < 0 ? starts[i] + dim : starts[i];
    s = steps[i] > 0 ? std::clamp<std::int64_t>(s, 0, dim)
                     : std::clamp<std::int64_t>(s, 0, dim - 1);
    first[static_cast<std::size_t>(a)] = s;
    step[static_cast<std::size_t>(a)] = steps[i];
  }
  define(
      node.outputs[0],
      [&](const std::vector<Var>& v) {
        std::vector<Expr> index;
        for (int i = 0; i < r; ++i) {
          index.push_back(v[i] * static_cast<int>(step[static_cast<std::size_t>(i)]) +
                          static_cast<int>(first[static_cast<std::size_t>(i)]));
        }
        return at(x, index);
      },
      "slice");
}

void Lowerer::lower_pad(const Node& node) {
  const ValueId x = node.input(0);
  const int r = rank(x);
  const std::vector<std::int64_t> pads =
      graph_.opset >= 11 ? *constant_ints(graph_, node.input(1)) : node.attributes.get_ints("pads");
  float fill = 0.0f;
  if (graph_.opset >= 11) {
    if (auto v = constant_scalar(graph_, node.input(2))) fill = *v;
  } else {
    fill = node.attributes.get_float("value", 0.0f);
  }
  const std::string mode = node.attributes.get_string("mode", "constant");
  define(
      node.outputs[0],
      [&](const std::vector<Var>& v) {
        std::vector<Expr> index;
        std::vector<bool> checked;
        for (int i = 0; i < r; ++i) {
          const int begin = static_cast<int>(pads[static_cast<std::size_t>(i)]);
          const int dim = static_cast<int>(shape(x)[static_cast<std::size_t>(i)]);
          Expr p = v[i] - begin;
          if (mode == "edge") {
            p = Halide::clamp(p, 0, dim - 1);
          } else if (mode == "reflect" && dim > 1) {
            // Reflect about the first and last elements: period 2 * (dim - 1).
            const int period = 2 * (dim - 1);
            Expr m = ((p % period) + period) % period;
            // The clamp changes nothing but tells bounds inference the range.
            p = Halide::clamp(Halide::select(m < dim, m, period - m), 0, dim - 1);
          }
          index.push_back(p);
          checked.push_back(mode == "constant" && (pads[static_cast<std::size_t>(i)] > 0 ||
                                                   pads[static_cast<std::size_t>(i + r)] > 0));
        }
        return at_or(x, index, checked, fill);
      },
      "pad");
}

// ---- dispatch

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

// ---------------------------------------------------------------- support

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
