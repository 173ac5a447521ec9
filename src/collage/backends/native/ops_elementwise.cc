// Elementwise math, comparison and logic ops.
//
// float32 math goes through the block functions of elementwise_math.h (one
// step of an ElementwiseProgram), the same code the fused loops run. The
// integer paths (shape arithmetic in constant folding: Add, Mul, Div on
// int64), comparisons, logic and Where are typed loops over a BroadcastPlan.
#include <cassert>
#include <cmath>
#include <functional>
#include <limits>
#include <type_traits>

#include "collage/backends/native/broadcast.h"
#include "collage/backends/native/elementwise_fusion.h"
#include "collage/backends/native/elementwise_math.h"
#include "collage/backends/native/tensor_kernels.h"

namespace collage::native {
namespace {

constexpr std::initializer_list<DType> kIntegers = {DType::kInt32, DType::kInt64};
constexpr std::initializer_list<DType> kArithmetic = {DType::kFloat32, DType::kInt32,
                                                      DType::kInt64};
// The element types Add, Sub, Mul, Div, Sum, Min and Max compute on.
constexpr std::initializer_list<DType> kBinaryArithmetic = {
    DType::kFloat32, DType::kFloat64, DType::kInt8, DType::kUInt8,
    DType::kInt16,   DType::kInt32,   DType::kInt64};
constexpr std::initializer_list<DType> kComparable = {
    DType::kFloat32, DType::kFloat64, DType::kInt8, DType::kUInt8, DType::kInt32, DType::kInt64};

// The broadcast of all present inputs' shapes must be the output shape:
// a graph whose static type says otherwise is malformed.
void check_broadcast_output(const Node& node, std::span<const Tensor> inputs, const Tensor& out) {
  Shape shape;
  try {
    for (const Tensor& input : inputs) shape = broadcast_shapes(shape, input.shape());
  } catch (const Error& error) {
    throw node_error(node, error.message());
  }
  if (shape != out.shape()) {
    throw node_error(node, "output shape " + shape_to_string(out.shape()) +
                               " is not the broadcast of the inputs " + shape_to_string(shape));
  }
}

// --- float32 math ----------------------------------------------------------

// Clip with bounds that are graph inputs: known only now.
ElementwiseFn clip_at_run_time(const Graph& graph, const Node& node,
                               std::span<const Tensor> inputs) {
  ScalarParams params{std::numeric_limits<float>::lowest(), std::numeric_limits<float>::max()};
  for (std::size_t i = 1; i <= 2; ++i) {
    if (i >= inputs.size() || inputs[i].empty()) continue;
    if (inputs[i].numel() != 1) throw node_error(node, "min and max must be scalars");
    (i == 1 ? params.alpha : params.beta) = static_cast<float>(inputs[i].number_at(0));
  }
  return ElementwiseFn{.unary = unary_block("Clip"), .params = params};
}

void run_float(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
               std::span<Tensor> outputs, int threads) {
  std::optional<ElementwiseFn> fn = float_elementwise_fn(graph, node);
  if (!fn) {
    // Only Clip has parameters that can be unknown until run time.
    assert(node.op_type == "Clip" && "run_float: check passed a node with no float function");
    fn = clip_at_run_time(graph, node, inputs);
  }
  const auto operands = static_cast<std::size_t>(fn->operands);
  check_broadcast_output(node, inputs.first(operands), outputs[0]);
  std::vector<Shape> shapes;
  ElementwiseProgram::Step step{*fn, {}};
  for (std::size_t k = 0; k < operands; ++k) {
    shapes.push_back(inputs[k].shape());
    step.operands.push_back({true, static_cast<int>(k)});
  }
  const ElementwiseProgram program(outputs[0].shape(), std::move(shapes), {std::move(step)});
  program.run(inputs.first(operands), outputs[0], threads);
}

// --- typed loops -----------------------------------------------------------

// out = f(a, b) with numpy broadcasting; `out` may be `a` itself.
template <typename A, typename B, typename O, typename F>
void broadcast_apply(const Tensor& a, const Tensor& b, Tensor& out, int threads, F f) {
  const Shape shapes[] = {a.shape(), b.shape()};
  const BroadcastPlan plan = plan_broadcast(out.shape(), shapes);
  const A* pa = a.data<A>();
  const B* pb = b.data<B>();
  O* po = out.data<O>();
  const std::int64_t sa = plan.inner_stride(0);
  const std::int64_t sb = plan.inner_stride(1);
  for_each_run(plan, threads, [&](std::int64_t o, const std::int64_t* offsets, std::int64_t n) {
    const A* x = pa + offsets[0];
    const B* y = pb + offsets[1];
    O* z = po + o;
    for (std::int64_t i = 0; i < n; ++i) z[i] = f(x[i * sa], y[i * sb]);
  });
}

// f folded left over all inputs (binary ops and variadic Sum/Min/Max).
template <typename T, typename F>
void fold_apply(const Node& node, std::span<const Tensor> inputs, Tensor& out, int threads, F f) {
  check_broadcast_output(node, inputs, out);
  if (inputs.size() == 1) {
    broadcast_apply<T, T, T>(inputs[0], inputs[0], out, threads, [](T x, T) { return x; });
    return;
  }
  broadcast_apply<T, T, T>(inputs[0], inputs[1], out, threads, f);
  for (std::size_t k = 2; k < inputs.size(); ++k) {
    broadcast_apply<T, T, T>(out, inputs[k], out, threads, f);
  }
}

template <typename T>
void check_no_zero_divisor(const Node& node, const Tensor& divisor) {
  const T* data = divisor.data<T>();
  for (std::int64_t i = 0; i < divisor.numel(); ++i) {
    if (data[i] == 0) throw node_error(node, "integer division by zero");
  }
}

// Integer arithmetic wraps around on overflow, as two's complement hardware
// does (and as numpy and ONNX Runtime do), instead of being undefined
// behaviour: the operations run on the unsigned type, whose conversion back
// is modular since C++20.
template <typename T>
T wrapping_add(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
}
template <typename T>
T wrapping_sub(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(a) - static_cast<U>(b));
}
template <typename T>
T wrapping_mul(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
}
template <typename T>
T wrapping_neg(T a) {
  return wrapping_sub<T>(0, a);
}
// Truncates toward zero, as ONNX integer Div does. The one quotient that does
// not fit, MIN / -1, wraps to MIN (the x86 idiv instruction would trap with
// SIGFPE); a zero divisor is refused before (check_no_zero_divisor).
template <typename T>
T wrapping_div(T a, T b) {
  return b == -1 ? wrapping_neg(a) : static_cast<T>(a / b);
}

// Arithmetic on the types other than float32 (which run_float fuses and
// vectorizes): float64 as IEEE does it, the integers wrapping around.
template <typename T>
void typed_arithmetic(const Node& node, std::span<const Tensor> inputs, Tensor& out, int threads) {
  const std::string& op = node.op_type;
  if (op == "Min") {
    return fold_apply<T>(node, inputs, out, threads, [](T a, T b) { return std::min(a, b); });
  }
  if (op == "Max") {
    return fold_apply<T>(node, inputs, out, threads, [](T a, T b) { return std::max(a, b); });
  }
  if constexpr (std::is_floating_point_v<T>) {
    if (op == "Add" || op == "Sum")
      return fold_apply<T>(node, inputs, out, threads, std::plus<T>());
    if (op == "Sub") return fold_apply<T>(node, inputs, out, threads, std::minus<T>());
    if (op == "Mul") return fold_apply<T>(node, inputs, out, threads, std::multiplies<T>());
    if (op == "Div") return fold_apply<T>(node, inputs, out, threads, std::divides<T>());
  } else {
    if (op == "Add" || op == "Sum") {
      return fold_apply<T>(node, inputs, out, threads, [](T a, T b) { return wrapping_add(a, b); });
    }
    if (op == "Sub") {
      return fold_apply<T>(node, inputs, out, threads, [](T a, T b) { return wrapping_sub(a, b); });
    }
    if (op == "Mul") {
      return fold_apply<T>(node, inputs, out, threads, [](T a, T b) { return wrapping_mul(a, b); });
    }
    if (op == "Div") {
      check_no_zero_divisor<T>(node, inputs[1]);
      return fold_apply<T>(node, inputs, out, threads, [](T a, T b) { return wrapping_div(a, b); });
    }
  }
  throw node_error(node, "no kernel for " + std::string(dtype_name(out.dtype())));
}

void run_arithmetic(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                    std::span<Tensor> outputs, int threads) {
  if (outputs[0].dtype() == DType::kFloat32)
    return run_float(graph, node, inputs, outputs, threads);
  visit_dtype(outputs[0].dtype(), [&]<typename T>(std::type_identity<T>) {
    if constexpr (!std::is_same_v<T, bool>) typed_arithmetic<T>(node, inputs, outputs[0], threads);
  });
}

bool check_arithmetic(const Graph& graph, const Node& node) {
  const bool variadic = node.op_type == "Sum" || node.op_type == "Min" || node.op_type == "Max";
  if (variadic ? node.inputs.empty() : node.inputs.size() != 2) return false;
  const DType dtype = output_dtype(graph, node, 0);
  if (!is_one_of(dtype, kBinaryArithmetic)) return false;
  for (std::size_t i = 0; i < node.inputs.size(); ++i) {
    if (!input_is(graph, node, i, {dtype})) return false;
  }
  return true;
}

// Pow: a float32 base with a float32 or integer exponent, or integer powers.
void run_pow(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
             std::span<Tensor> outputs, int threads) {
  const DType base = inputs[0].dtype();
  const DType exponent = inputs[1].dtype();
  if (base == DType::kFloat32 && exponent == DType::kFloat32) {
    return run_float(graph, node, inputs, outputs, threads);
  }
  check_broadcast_output(node, inputs, outputs[0]);
  visit_dtype(base, [&](auto base_type) {
    using B = typename decltype(base_type)::type;
    visit_dtype(exponent, [&](auto exponent_type) {
      using E = typename decltype(exponent_type)::type;
      if constexpr (std::is_arithmetic_v<B> && !std::is_same_v<B, bool> &&
                    !std::is_same_v<E, bool>) {
        broadcast_apply<B, E, B>(inputs[0], inputs[1], outputs[0], threads, [](B b, E e) {
          return static_cast<B>(std::pow(static_cast<double>(b), static_cast<double>(e)));
        });
      }
    });
  });
}

bool check_pow(const Graph& graph, const Node& node) {
  if (node.inputs.size() != 2) return false;
  const DType base = output_dtype(graph, node, 0);
  if (!is_one_of(base, kArithmetic) || !input_is(graph, node, 0, {base})) return false;
  if (base == DType::kFloat32) return input_is(graph, node, 1, kArithmetic);
  return input_is(graph, node, 1, kIntegers);
}

// Mod: the remainder of integer division with the divisor's sign (fmod = 0,
// Python's %), or with the dividend's (fmod = 1, C's fmod; the only mode
// ONNX allows for floats).
void run_mod(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
             std::span<Tensor> outputs, int threads) {
  (void)graph;
  check_broadcast_output(node, inputs, outputs[0]);
  const bool fmod = node.attributes.get_int("fmod", 0) != 0;
  visit_dtype(outputs[0].dtype(), [&](auto type) {
    using T = typename decltype(type)::type;
    if constexpr (std::is_floating_point_v<T>) {
      broadcast_apply<T, T, T>(inputs[0], inputs[1], outputs[0], threads,
                               [](T a, T b) { return std::fmod(a, b); });
    } else if constexpr (!std::is_same_v<T, bool>) {
      check_no_zero_divisor<T>(node, inputs[1]);
      broadcast_apply<T, T, T>(inputs[0], inputs[1], outputs[0], threads, [fmod](T a, T b) {
        // MIN % -1 overflows in the division; every remainder by -1 is 0.
        if constexpr (std::is_signed_v<T>) {
          if (b == -1) return T{0};
        }
        auto r = static_cast<T>(a % b);
        if constexpr (std::is_signed_v<T>) {
          if (!fmod && r != 0 && (r < 0) != (b < 0)) r = static_cast<T>(r + b);
        }
        return r;
      });
    }
  });
}

bool check_mod(const Graph& graph, const Node& node) {
  if (node.inputs.size() != 2 || node.outputs.size() != 1) return false;
  const DType dtype = output_dtype(graph, node, 0);
  const bool is_float = dtype == DType::kFloat32 || dtype == DType::kFloat64;
  if (is_float && node.attributes.get_int("fmod", 0) == 0) return false;
  if (!is_float && !is_one_of(dtype, {DType::kInt8, DType::kUInt8, DType::kInt16, DType::kInt32,
                                      DType::kInt64})) {
    return false;
  }
  return input_is(graph, node, 0, {dtype}) && input_is(graph, node, 1, {dtype});
}

// Float-only ops (Mean, PRelu, the activations): float_elementwise_fn decides.
bool check_float(const Graph& graph, const Node& node) {
  return float_elementwise_fn(graph, node).has_value();
}

// Clip on float32 is an elementwise function (bounds that are not
// constants are read at run time); on the other types (opset 11 on, whose
// bounds are inputs) a loop clamps between the bounds given, or the type's
// own limits where one is omitted.
void run_clip(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
              std::span<Tensor> outputs, int threads) {
  if (outputs[0].dtype() == DType::kFloat32)
    return run_float(graph, node, inputs, outputs, threads);
  if (inputs[0].shape() != outputs[0].shape()) throw node_error(node, "output shape differs");
  visit_dtype(outputs[0].dtype(), [&]<typename T>(std::type_identity<T>) {
    if constexpr (!std::is_same_v<T, bool>) {
      const auto bound = [&](std::size_t i, T fallback) {
        if (i >= inputs.size() || inputs[i].empty()) return fallback;
        if (inputs[i].numel() != 1) throw node_error(node, "a bound must be one value");
        return inputs[i].data<T>()[0];
      };
      const T low = bound(1, std::numeric_limits<T>::lowest());
      const T high = bound(2, std::numeric_limits<T>::max());
      const T* x = inputs[0].data<T>();
      T* y = outputs[0].data<T>();
      for (std::int64_t i = 0; i < inputs[0].numel(); ++i)
        y[i] = std::min(std::max(x[i], low), high);
    }
  });
}

bool check_clip(const Graph& graph, const Node& node) {
  if (node.inputs.empty() || node.inputs.size() > 3 || node.outputs.size() != 1) return false;
  const std::optional<DType> dtype = input_dtype(graph, node, 0);
  if (!dtype || output_dtype(graph, node, 0) != *dtype || !is_one_of(*dtype, kBinaryArithmetic)) {
    return false;
  }
  if (*dtype != DType::kFloat32 && graph.opset < 11) return false;
  for (std::size_t i = 1; i < node.inputs.size(); ++i) {
    if (node.inputs[i] != kNoValue && !input_is(graph, node, i, {*dtype})) return false;
  }
  return graph.opset >= 11 || node.inputs.size() == 1;
}

// Neg, Abs and Sign, which also apply to signed integers.
void run_signed_unary(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                      std::span<Tensor> outputs, int threads) {
  if (outputs[0].dtype() == DType::kFloat32)
    return run_float(graph, node, inputs, outputs, threads);
  if (inputs[0].shape() != outputs[0].shape()) throw node_error(node, "output shape differs");
  auto run = [&](auto type) {
    using T = typename decltype(type)::type;
    const T* x = inputs[0].data<T>();
    T* y = outputs[0].data<T>();
    const std::int64_t n = inputs[0].numel();
    const std::string& op = node.op_type;
    for (std::int64_t i = 0; i < n; ++i) {
      if (op == "Neg") y[i] = wrapping_neg(x[i]);
      if (op == "Abs") y[i] = x[i] < 0 ? wrapping_neg(x[i]) : x[i];
      if (op == "Sign") y[i] = static_cast<T>((x[i] > 0) - (x[i] < 0));
    }
  };
  if (outputs[0].dtype() == DType::kInt32) return run(std::type_identity<std::int32_t>{});
  run(std::type_identity<std::int64_t>{});
}

bool check_signed_unary(const Graph& graph, const Node& node) {
  if (node.inputs.size() != 1) return false;
  const DType dtype = output_dtype(graph, node, 0);
  return is_one_of(dtype, kArithmetic) && input_is(graph, node, 0, {dtype});
}

// --- comparisons and logic -------------------------------------------------

template <typename Compare>
void run_comparison(const Node& node, std::span<const Tensor> inputs, Tensor& out, int threads,
                    Compare compare) {
  check_broadcast_output(node, inputs, out);
  visit_dtype(inputs[0].dtype(), [&](auto type) {
    using T = typename decltype(type)::type;
    broadcast_apply<T, T, bool>(inputs[0], inputs[1], out, threads,
                                [&](T a, T b) { return compare(a, b); });
  });
}

void run_compare(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                 std::span<Tensor> outputs, int threads) {
  const std::string& op = node.op_type;
  Tensor& out = outputs[0];
  if (op == "Equal") return run_comparison(node, inputs, out, threads, std::equal_to<>());
  if (op == "Less") return run_comparison(node, inputs, out, threads, std::less<>());
  if (op == "Greater") return run_comparison(node, inputs, out, threads, std::greater<>());
  if (op == "LessOrEqual") return run_comparison(node, inputs, out, threads, std::less_equal<>());
  run_comparison(node, inputs, out, threads, std::greater_equal<>());
}

bool check_compare(const Graph& graph, const Node& node) {
  if (node.inputs.size() != 2 || output_dtype(graph, node, 0) != DType::kBool) return false;
  const std::optional<DType> dtype = input_dtype(graph, node, 0);
  if (!dtype || !input_is(graph, node, 1, {*dtype})) return false;
  if (node.op_type == "Equal" && *dtype == DType::kBool) return true;
  return is_one_of(*dtype, kComparable);
}

void run_logic(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
               std::span<Tensor> outputs, int threads) {
  Tensor& out = outputs[0];
  check_broadcast_output(node, inputs, out);
  const std::string& op = node.op_type;
  if (op == "Not") {
    const bool* x = inputs[0].data<bool>();
    bool* y = out.data<bool>();
    for (std::int64_t i = 0; i < out.numel(); ++i) y[i] = !x[i];
    return;
  }
  auto apply = [&](auto f) {
    broadcast_apply<bool, bool, bool>(inputs[0], inputs[1], out, threads, f);
  };
  if (op == "And") return apply([](bool a, bool b) { return a && b; });
  if (op == "Or") return apply([](bool a, bool b) { return a || b; });
  apply([](bool a, bool b) { return a != b; });
}

bool check_logic(const Graph& graph, const Node& node) {
  const std::size_t arity = node.op_type == "Not" ? 1 : 2;
  if (node.inputs.size() != arity || output_dtype(graph, node, 0) != DType::kBool) return false;
  for (std::size_t i = 0; i < arity; ++i) {
    if (!input_is(graph, node, i, {DType::kBool})) return false;
  }
  return true;
}

// IsNaN, and IsInf with its detect_negative / detect_positive switches.
template <typename T>
void classify_typed(const Node& node, const Tensor& x, Tensor& out) {
  const T* values = x.data<T>();
  bool* flags = out.data<bool>();
  if (node.op_type == "IsNaN") {
    for (std::int64_t i = 0; i < x.numel(); ++i) flags[i] = std::isnan(values[i]);
    return;
  }
  const bool negative = node.attributes.get_int("detect_negative", 1) != 0;
  const bool positive = node.attributes.get_int("detect_positive", 1) != 0;
  for (std::int64_t i = 0; i < x.numel(); ++i) {
    const T v = values[i];
    flags[i] = std::isinf(v) && ((v > 0 && positive) || (v < 0 && negative));
  }
}

void run_classify(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                  std::span<Tensor> outputs, int threads) {
  if (outputs[0].shape() != inputs[0].shape()) {
    throw node_error(node, "the output's shape differs from the input's");
  }
  if (inputs[0].dtype() == DType::kFloat64) {
    return classify_typed<double>(node, inputs[0], outputs[0]);
  }
  classify_typed<float>(node, inputs[0], outputs[0]);
}

bool check_classify(const Graph& graph, const Node& node) {
  return node.inputs.size() == 1 && output_dtype(graph, node, 0) == DType::kBool &&
         input_is(graph, node, 0, {DType::kFloat32, DType::kFloat64});
}

// Where selects whole elements, so it moves them as words of their size and
// works for every dtype.
template <typename T>
void where_typed(const Tensor& condition, const Tensor& x, const Tensor& y, Tensor& out,
                 int threads) {
  const Shape shapes[] = {condition.shape(), x.shape(), y.shape()};
  const BroadcastPlan plan = plan_broadcast(out.shape(), shapes);
  const bool* c = condition.data<bool>();
  const T* px = static_cast<const T*>(x.raw());
  const T* py = static_cast<const T*>(y.raw());
  T* po = static_cast<T*>(out.raw());
  const std::int64_t sc = plan.inner_stride(0);
  const std::int64_t sx = plan.inner_stride(1);
  const std::int64_t sy = plan.inner_stride(2);
  for_each_run(plan, threads, [&](std::int64_t o, const std::int64_t* offsets, std::int64_t n) {
    for (std::int64_t i = 0; i < n; ++i) {
      po[o + i] = c[offsets[0] + i * sc] ? px[offsets[1] + i * sx] : py[offsets[2] + i * sy];
    }
  });
}

void run_where(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
               std::span<Tensor> outputs, int threads) {
  check_broadcast_output(node, inputs, outputs[0]);
  switch (dtype_size(outputs[0].dtype())) {
    case 1:
      return where_typed<std::uint8_t>(inputs[0], inputs[1], inputs[2], outputs[0], threads);
    case 2:
      return where_typed<std::uint16_t>(inputs[0], inputs[1], inputs[2], outputs[0], threads);
    case 4:
      return where_typed<std::uint32_t>(inputs[0], inputs[1], inputs[2], outputs[0], threads);
    default:
      where_typed<std::uint64_t>(inputs[0], inputs[1], inputs[2], outputs[0], threads);
  }
}

bool check_where(const Graph& graph, const Node& node) {
  if (node.inputs.size() != 3 || !input_is(graph, node, 0, {DType::kBool})) return false;
  const DType dtype = output_dtype(graph, node, 0);
  return input_is(graph, node, 1, {dtype}) && input_is(graph, node, 2, {dtype});
}

constexpr OpEntry kElementwiseOps[] = {
    {"Relu", run_float, check_float},
    {"LeakyRelu", run_float, check_float},
    {"Elu", run_float, check_float},
    {"Selu", run_float, check_float},
    {"Sigmoid", run_float, check_float},
    {"HardSigmoid", run_float, check_float},
    {"HardSwish", run_float, check_float},
    {"Swish", run_float, check_float},
    {"Gelu", run_float, check_float},
    {"Clip", run_clip, check_clip},
    {"Tanh", run_float, check_float},
    {"Erf", run_float, check_float},
    {"Exp", run_float, check_float},
    {"Log", run_float, check_float},
    {"Sqrt", run_float, check_float},
    {"Reciprocal", run_float, check_float},
    {"Floor", run_float, check_float},
    {"Ceil", run_float, check_float},
    {"Round", run_float, check_float},
    {"Sin", run_float, check_float},
    {"Cos", run_float, check_float},
    {"Tan", run_float, check_float},
    {"Asin", run_float, check_float},
    {"Acos", run_float, check_float},
    {"Atan", run_float, check_float},
    {"Sinh", run_float, check_float},
    {"Cosh", run_float, check_float},
    {"Asinh", run_float, check_float},
    {"Acosh", run_float, check_float},
    {"Atanh", run_float, check_float},
    {"ThresholdedRelu", run_float, check_float},
    {"Shrink", run_float, check_float},
    {"Celu", run_float, check_float},
    {"Softplus", run_float, check_float},
    {"Softsign", run_float, check_float},
    {"Neg", run_signed_unary, check_signed_unary},
    {"Abs", run_signed_unary, check_signed_unary},
    {"Sign", run_signed_unary, check_signed_unary},
    {"Add", run_arithmetic, check_arithmetic},
    {"Sub", run_arithmetic, check_arithmetic},
    {"Mul", run_arithmetic, check_arithmetic},
    {"Div", run_arithmetic, check_arithmetic},
    {"Min", run_arithmetic, check_arithmetic},
    {"Max", run_arithmetic, check_arithmetic},
    {"Sum", run_arithmetic, check_arithmetic},
    {"Mean", run_float, check_float},
    {"PRelu", run_float, check_float},
    {"Pow", run_pow, check_pow},
    {"Mod", run_mod, check_mod},
    {"Equal", run_compare, check_compare},
    {"Less", run_compare, check_compare},
    {"Greater", run_compare, check_compare},
    {"LessOrEqual", run_compare, check_compare},
    {"GreaterOrEqual", run_compare, check_compare},
    {"Not", run_logic, check_logic},
    {"And", run_logic, check_logic},
    {"Or", run_logic, check_logic},
    {"Xor", run_logic, check_logic},
    {"IsNaN", run_classify, check_classify},
    {"IsInf", run_classify, check_classify},
    {"Where", run_where, check_where},
};

}  // namespace

std::span<const OpEntry> elementwise_ops() { return kElementwiseOps; }

}  // namespace collage::native
