#include "collage/backends/native/elementwise_math.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "collage/backends/native/vector_math.h"

namespace collage::native {
namespace {

// Unary ops: function objects built from the node's parameters.
struct Relu {
  ScalarParams p;
  float operator()(float x) const { return x > 0.0f ? x : 0.0f; }
};
struct LeakyRelu {
  ScalarParams p;
  float operator()(float x) const { return x >= 0.0f ? x : p.alpha * x; }
};
struct Elu {
  ScalarParams p;
  float operator()(float x) const { return x >= 0.0f ? x : p.alpha * std::expm1(x); }
};
// alpha and gamma (in beta).
struct Selu {
  ScalarParams p;
  float operator()(float x) const { return p.beta * (x > 0.0f ? x : p.alpha * std::expm1(x)); }
};
// 1 / (1 + e^-x), written per sign so that exp never overflows.
inline float sigmoid(float x) {
  if (x >= 0.0f) return 1.0f / (1.0f + std::exp(-x));
  const float e = std::exp(x);
  return e / (1.0f + e);
}

struct Sigmoid {
  ScalarParams p;
  float operator()(float x) const { return sigmoid(x); }
  __m256 operator()(__m256 x) const { return sigmoid8(x); }
  COLLAGE_AVX512 __m512 operator()(__m512 x) const { return sigmoid16(x); }
};
// x * sigmoid(alpha * x).
struct Swish {
  ScalarParams p;
  float operator()(float x) const { return x * sigmoid(p.alpha * x); }
  __m256 operator()(__m256 x) const {
    return _mm256_mul_ps(x, sigmoid8(_mm256_mul_ps(_mm256_set1_ps(p.alpha), x)));
  }
  COLLAGE_AVX512 __m512 operator()(__m512 x) const {
    return _mm512_mul_ps(x, sigmoid16(_mm512_mul_ps(_mm512_set1_ps(p.alpha), x)));
  }
};
// x * Phi(x) = x / 2 * (1 + erf(x / sqrt(2))), with 1 + erf(t) written as
// erfc(-t): for negative x the sum cancels to 0 long before the result is.
struct GeluErf {
  ScalarParams p;
  float operator()(float x) const {
    constexpr float kMinusSqrtHalf = -0.70710678118654752f;
    return 0.5f * x * std::erfc(kMinusSqrtHalf * x);
  }
};
// x / 2 * (1 + tanh(u)) with u = sqrt(2 / pi) * (x + 0.044715 * x^3), as
// x * sigmoid(2u): the same function, without the cancellation of 1 + tanh
// for negative x. u is x * (1 + c * x^2) so that x^3 cannot overflow before
// the result saturates.
struct GeluTanh {
  ScalarParams p;
  float operator()(float x) const {
    constexpr float kTwoSqrtTwoOverPi = 1.5957691216057308f;
    constexpr float kCubic = 0.044715f;
    return x * sigmoid(kTwoSqrtTwoOverPi * x * (1.0f + kCubic * x * x));
  }
  __m256 operator()(__m256 x) const {
    const __m256 cubic = _mm256_mul_ps(_mm256_mul_ps(x, x), _mm256_set1_ps(0.044715f));
    const __m256 u = _mm256_mul_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.5957691216057308f)),
                                   _mm256_add_ps(cubic, _mm256_set1_ps(1.0f)));
    return _mm256_mul_ps(x, sigmoid8(u));
  }
  COLLAGE_AVX512 __m512 operator()(__m512 x) const {
    const __m512 cubic = _mm512_mul_ps(_mm512_mul_ps(x, x), _mm512_set1_ps(0.044715f));
    const __m512 u = _mm512_mul_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.5957691216057308f)),
                                   _mm512_add_ps(cubic, _mm512_set1_ps(1.0f)));
    return _mm512_mul_ps(x, sigmoid16(u));
  }
};
struct HardSigmoid {
  ScalarParams p;
  // min/max rather than std::clamp, whose references keep GCC from vectorizing.
  float operator()(float x) const { return std::min(std::max(p.alpha * x + p.beta, 0.0f), 1.0f); }
};
struct HardSwish {
  ScalarParams p;
  // x * HardSigmoid(x), alpha 1/6 and beta 1/2 (in p).
  float operator()(float x) const {
    const float gate = std::min(std::max(p.alpha * x + p.beta, 0.0f), 1.0f);
    return x * gate;
  }
};
// min in alpha, max in beta. When min > max every output is max, as ONNX says.
struct Clip {
  ScalarParams p;
  float operator()(float x) const { return std::min(std::max(x, p.alpha), p.beta); }
};
struct Tanh {
  ScalarParams p;
  float operator()(float x) const { return std::tanh(x); }
  __m256 operator()(__m256 x) const { return tanh8(x); }
  COLLAGE_AVX512 __m512 operator()(__m512 x) const { return tanh16(x); }
};
struct Erf {
  ScalarParams p;
  float operator()(float x) const { return std::erf(x); }
};
struct Exp {
  ScalarParams p;
  float operator()(float x) const { return std::exp(x); }
};
struct Log {
  ScalarParams p;
  float operator()(float x) const { return std::log(x); }
};
struct Sqrt {
  ScalarParams p;
  float operator()(float x) const { return std::sqrt(x); }
};
struct Reciprocal {
  ScalarParams p;
  float operator()(float x) const { return 1.0f / x; }
};
struct Neg {
  ScalarParams p;
  float operator()(float x) const { return -x; }
};
struct Abs {
  ScalarParams p;
  float operator()(float x) const { return std::fabs(x); }
};
struct Floor {
  ScalarParams p;
  float operator()(float x) const { return std::floor(x); }
};
struct Ceil {
  ScalarParams p;
  float operator()(float x) const { return std::ceil(x); }
};
// Halves round to even (the default floating-point rounding mode), as ONNX says.
struct Round {
  ScalarParams p;
  float operator()(float x) const { return std::nearbyint(x); }
};
struct Sign {
  ScalarParams p;
  float operator()(float x) const {
    if (x > 0.0f) return 1.0f;
    if (x < 0.0f) return -1.0f;
    return x;  // 0 stays 0 and NaN stays NaN
  }
};
struct Sin {
  ScalarParams p;
  float operator()(float x) const { return std::sin(x); }
};
struct Cos {
  ScalarParams p;
  float operator()(float x) const { return std::cos(x); }
};
struct Tan {
  ScalarParams p;
  float operator()(float x) const { return std::tan(x); }
};
struct Asin {
  ScalarParams p;
  float operator()(float x) const { return std::asin(x); }
};
struct Acos {
  ScalarParams p;
  float operator()(float x) const { return std::acos(x); }
};
struct Atan {
  ScalarParams p;
  float operator()(float x) const { return std::atan(x); }
};
struct Sinh {
  ScalarParams p;
  float operator()(float x) const { return std::sinh(x); }
};
struct Cosh {
  ScalarParams p;
  float operator()(float x) const { return std::cosh(x); }
};
struct Asinh {
  ScalarParams p;
  float operator()(float x) const { return std::asinh(x); }
};
struct Acosh {
  ScalarParams p;
  float operator()(float x) const { return std::acosh(x); }
};
struct Atanh {
  ScalarParams p;
  float operator()(float x) const { return std::atanh(x); }
};
// x where x > alpha, else 0.
struct ThresholdedRelu {
  ScalarParams p;
  float operator()(float x) const { return x > p.alpha ? x : 0.0f; }
};
// Shrink with lambd in alpha and bias in beta: x + bias below -lambd, x -
// bias above lambd, 0 between.
struct Shrink {
  ScalarParams p;
  float operator()(float x) const {
    if (x < -p.alpha) return x + p.beta;
    if (x > p.alpha) return x - p.beta;
    return 0.0f;
  }
};
// max(0, x) + min(0, alpha * (e^(x / alpha) - 1)).
struct Celu {
  ScalarParams p;
  float operator()(float x) const { return x > 0.0f ? x : p.alpha * std::expm1(x / p.alpha); }
};
// log(1 + e^x), without overflow for large x.
struct Softplus {
  ScalarParams p;
  float operator()(float x) const {
    return x > 0.0f ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
  }
};
struct Softsign {
  ScalarParams p;
  float operator()(float x) const { return x / (1.0f + std::fabs(x)); }
};
struct Identity {
  ScalarParams p;
  float operator()(float x) const { return x; }
};

// Whether an op has an eight-lane and a sixteen-lane form.
template <typename Op>
constexpr bool kHasLanes8 = requires(const Op& op, __m256 v) {
  op(v);
};
template <typename Op>
constexpr bool kHasLanes16 = requires(const Op& op, __m512 v) {
  op(v);
};

// The sixteen-lane form of an op that has one, on a processor with AVX-512:
// y = op(x) for the whole vectors, the tail left to the caller.
template <typename Op>
COLLAGE_AVX512 std::int64_t unary_lanes16(const Op& op, const float* x, float* y, std::int64_t n) {
  std::int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512 v = _mm512_loadu_ps(x + i);
    const __mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
    _mm512_storeu_ps(y + i, _mm512_mask_blend_ps(nan, op(v), v));
  }
  return i;
}

// An op with a vector form (vector_math.h: activations whose libm call
// keeps GCC's loop scalar) runs sixteen lanes at a time through it where
// the processor has AVX-512, else eight, and the tail through its scalar
// form; a NaN passes through, as libm passes it.
template <typename Op>
void unary_kernel(const float* x, std::int64_t x_stride, float* y, std::int64_t n,
                  ScalarParams params) {
  const Op op{params};
  if (x_stride == 0) {
    std::fill(y, y + n, op(x[0]));
    return;
  }
  if constexpr (kHasLanes8<Op>) {
    std::int64_t i = 0;
    if constexpr (kHasLanes16<Op>) {
      if (has_avx512()) i = unary_lanes16(op, x, y, n);
    }
    for (; i + 8 <= n; i += 8) {
      const __m256 v = _mm256_loadu_ps(x + i);
      const __m256 nan = _mm256_cmp_ps(v, v, _CMP_UNORD_Q);
      _mm256_storeu_ps(y + i, _mm256_blendv_ps(op(v), v, nan));
    }
    for (; i < n; ++i) y[i] = op(x[i]);
  } else {
    // simd: y may alias x exactly, which carries no dependence between
    // iterations; without the pragma GCC's -O2 cost model keeps the loop
    // scalar.
#pragma omp simd
    for (std::int64_t i = 0; i < n; ++i) y[i] = op(x[i]);
  }
}

// HardSwish in two vectorized passes per block, the gate then the product:
// in one expression GCC turns x * clamp(...) into branches (it folds x * 1
// to x) and the loop stays scalar, three times slower than HardSigmoid and
// Mul fused.
template <>
void unary_kernel<HardSwish>(const float* x, std::int64_t x_stride, float* y, std::int64_t n,
                             ScalarParams params) {
  if (x_stride == 0) {
    std::fill(y, y + n, HardSwish{params}(x[0]));
    return;
  }
  constexpr std::int64_t kBlock = 256;
  const HardSigmoid gate_of{params};
  float gate[kBlock];
  for (std::int64_t start = 0; start < n; start += kBlock) {
    const std::int64_t count = std::min(kBlock, n - start);
    const float* in = x + start;
    float* out = y + start;
#pragma omp simd
    for (std::int64_t i = 0; i < count; ++i) gate[i] = gate_of(in[i]);
#pragma omp simd
    for (std::int64_t i = 0; i < count; ++i) out[i] = in[i] * gate[i];
  }
}

struct Add {
  float operator()(float a, float b) const { return a + b; }
};
struct Sub {
  float operator()(float a, float b) const { return a - b; }
};
struct Mul {
  float operator()(float a, float b) const { return a * b; }
};
struct Div {
  float operator()(float a, float b) const { return a / b; }
};
struct Pow {
  float operator()(float a, float b) const { return std::pow(a, b); }
};
struct Min {
  float operator()(float a, float b) const { return std::min(a, b); }
};
struct Max {
  float operator()(float a, float b) const { return std::max(a, b); }
};
struct PRelu {
  float operator()(float x, float slope) const { return x < 0.0f ? slope * x : x; }
};

template <typename Op>
void binary_kernel(const float* a, std::int64_t a_stride, const float* b, std::int64_t b_stride,
                   float* y, std::int64_t n) {
  const Op op;
  // One loop per stride combination, so each one vectorizes (y may alias an
  // operand of stride 1 exactly, which simd allows).
  if (a_stride != 0 && b_stride != 0) {
#pragma omp simd
    for (std::int64_t i = 0; i < n; ++i) y[i] = op(a[i], b[i]);
  } else if (a_stride != 0) {
    const float bv = b[0];
#pragma omp simd
    for (std::int64_t i = 0; i < n; ++i) y[i] = op(a[i], bv);
  } else if (b_stride != 0) {
    const float av = a[0];
#pragma omp simd
    for (std::int64_t i = 0; i < n; ++i) y[i] = op(av, b[i]);
  } else {
    std::fill(y, y + n, op(a[0], b[0]));
  }
}

struct UnaryEntry {
  std::string_view op_type;
  UnaryBlock block;
};

constexpr UnaryEntry kUnaryOps[] = {
    {"Relu", &unary_kernel<Relu>},
    {"LeakyRelu", &unary_kernel<LeakyRelu>},
    {"Elu", &unary_kernel<Elu>},
    {"Selu", &unary_kernel<Selu>},
    {"Sigmoid", &unary_kernel<Sigmoid>},
    {"HardSigmoid", &unary_kernel<HardSigmoid>},
    {"HardSwish", &unary_kernel<HardSwish>},
    {"Swish", &unary_kernel<Swish>},
    // approximate = "none", Gelu's default; node_unary_block picks the tanh form.
    {"Gelu", &unary_kernel<GeluErf>},
    {"Clip", &unary_kernel<Clip>},
    {"Tanh", &unary_kernel<Tanh>},
    {"Erf", &unary_kernel<Erf>},
    {"Exp", &unary_kernel<Exp>},
    {"Log", &unary_kernel<Log>},
    {"Sqrt", &unary_kernel<Sqrt>},
    {"Reciprocal", &unary_kernel<Reciprocal>},
    {"Neg", &unary_kernel<Neg>},
    {"Abs", &unary_kernel<Abs>},
    {"Floor", &unary_kernel<Floor>},
    {"Ceil", &unary_kernel<Ceil>},
    {"Round", &unary_kernel<Round>},
    {"Sign", &unary_kernel<Sign>},
    {"Sin", &unary_kernel<Sin>},
    {"Cos", &unary_kernel<Cos>},
    {"Tan", &unary_kernel<Tan>},
    {"Asin", &unary_kernel<Asin>},
    {"Acos", &unary_kernel<Acos>},
    {"Atan", &unary_kernel<Atan>},
    {"Sinh", &unary_kernel<Sinh>},
    {"Cosh", &unary_kernel<Cosh>},
    {"Asinh", &unary_kernel<Asinh>},
    {"Acosh", &unary_kernel<Acosh>},
    {"Atanh", &unary_kernel<Atanh>},
    {"ThresholdedRelu", &unary_kernel<ThresholdedRelu>},
    {"Shrink", &unary_kernel<Shrink>},
    {"Celu", &unary_kernel<Celu>},
    {"Softplus", &unary_kernel<Softplus>},
    {"Softsign", &unary_kernel<Softsign>},
    {"Identity", &unary_kernel<Identity>},
};

struct BinaryEntry {
  std::string_view op_type;
  BinaryBlock block;
  // Sum, Mean, Min and Max take one or more inputs; the others exactly two.
  bool variadic;
};

constexpr BinaryEntry kBinaryOps[] = {
    {"Add", &binary_kernel<Add>, false}, {"Sub", &binary_kernel<Sub>, false},
    {"Mul", &binary_kernel<Mul>, false}, {"Div", &binary_kernel<Div>, false},
    {"Pow", &binary_kernel<Pow>, false}, {"PRelu", &binary_kernel<PRelu>, false},
    {"Min", &binary_kernel<Min>, true},  {"Max", &binary_kernel<Max>, true},
    {"Sum", &binary_kernel<Add>, true},  {"Mean", &binary_kernel<Add>, true},
};

bool is_f32(const Graph& graph, ValueId value) {
  return value != kNoValue && graph.type(value).dtype == DType::kFloat32;
}

// A Clip bound: an omitted input is no bound, a constant scalar is its value,
// anything else is unknown until run time.
std::optional<float> constant_bound(const Graph& graph, ValueId value, float none) {
  if (value == kNoValue) return none;
  const Value& bound = graph.value(value);
  if (!bound.is_constant() || bound.type.dtype != DType::kFloat32 || bound.type.numel() != 1) {
    return std::nullopt;
  }
  return bound.constant->data<float>()[0];
}

std::optional<ScalarParams> unary_params(const Graph& graph, const Node& node) {
  const Attributes& attributes = node.attributes;
  const std::string& op = node.op_type;
  if (op == "LeakyRelu") return ScalarParams{attributes.get_float("alpha", 0.01f), 0.0f};
  if (op == "Elu") return ScalarParams{attributes.get_float("alpha", 1.0f), 0.0f};
  if (op == "Selu") {
    return ScalarParams{attributes.get_float("alpha", 1.67326319217681884765625f),
                        attributes.get_float("gamma", 1.05070102214813232421875f)};
  }
  if (op == "Swish") return ScalarParams{attributes.get_float("alpha", 1.0f), 0.0f};
  if (op == "ThresholdedRelu") return ScalarParams{attributes.get_float("alpha", 1.0f), 0.0f};
  if (op == "Celu") return ScalarParams{attributes.get_float("alpha", 1.0f), 0.0f};
  if (op == "Shrink") {
    return ScalarParams{attributes.get_float("lambd", 0.5f), attributes.get_float("bias", 0.0f)};
  }
  if (op == "HardSwish") return ScalarParams{1.0f / 6.0f, 0.5f};
  if (op == "HardSigmoid") {
    return ScalarParams{attributes.get_float("alpha", 0.2f), attributes.get_float("beta", 0.5f)};
  }
  if (op != "Clip") return ScalarParams{};
  constexpr float kLowest = std::numeric_limits<float>::lowest();
  constexpr float kHighest = std::numeric_limits<float>::max();
  // Before opset 11 the bounds are attributes; from 11 on, optional inputs.
  if (graph.opset < 11) {
    return ScalarParams{attributes.get_float("min", kLowest),
                        attributes.get_float("max", kHighest)};
  }
  const std::optional<float> low = constant_bound(graph, node.input(1), kLowest);
  const std::optional<float> high = constant_bound(graph, node.input(2), kHighest);
  if (!low || !high) return std::nullopt;
  return ScalarParams{*low, *high};
}

// The function of a unary node: its op type's, except that Gelu's depends on
// its approximate attribute.
UnaryBlock node_unary_block(const Node& node) {
  if (node.op_type != "Gelu") return unary_block(node.op_type);
  const std::string approximate = node.attributes.get_string("approximate", "none");
  if (approximate == "none") return &unary_kernel<GeluErf>;
  if (approximate == "tanh") return &unary_kernel<GeluTanh>;
  return nullptr;
}

}  // namespace

UnaryBlock unary_block(std::string_view op_type) {
  for (const UnaryEntry& entry : kUnaryOps) {
    if (entry.op_type == op_type) return entry.block;
  }
  return nullptr;
}

std::optional<ElementwiseFn> float_elementwise_fn(const Graph& graph, const Node& node) {
  if (!node.domain.empty() || node.outputs.size() != 1 || !is_f32(graph, node.outputs[0])) {
    return std::nullopt;
  }
  if (UnaryBlock block = node_unary_block(node)) {
    // Clip's extra inputs are its bounds, not operands.
    const std::size_t max_inputs = node.op_type == "Clip" ? 3 : 1;
    if (node.inputs.empty() || node.inputs.size() > max_inputs || !is_f32(graph, node.inputs[0])) {
      return std::nullopt;
    }
    std::optional<ScalarParams> params = unary_params(graph, node);
    if (!params) return std::nullopt;
    return ElementwiseFn{.unary = block, .params = *params};
  }
  for (const BinaryEntry& entry : kBinaryOps) {
    if (entry.op_type != node.op_type) continue;
    const std::size_t count = node.inputs.size();
    if (entry.variadic ? count < 1 : count != 2) return std::nullopt;
    for (ValueId input : node.inputs) {
      if (!is_f32(graph, input)) return std::nullopt;
    }
    const int operands = static_cast<int>(count);
    const float scale = node.op_type == "Mean" ? 1.0f / static_cast<float>(count) : 1.0f;
    if (operands == 1) return ElementwiseFn{.unary = &unary_kernel<Identity>, .scale = scale};
    return ElementwiseFn{.binary = entry.block, .scale = scale, .operands = operands};
  }
  return std::nullopt;
}

void apply_block(const ElementwiseFn& fn, const float* const* operands, const std::int64_t* strides,
                 float* y, std::int64_t n) {
  if (fn.unary != nullptr) {
    fn.unary(operands[0], strides[0], y, n, fn.params);
  } else {
    fn.binary(operands[0], strides[0], operands[1], strides[1], y, n);
    for (int k = 2; k < fn.operands; ++k) fn.binary(y, 1, operands[k], strides[k], y, n);
  }
  if (fn.scale != 1.0f) {
#pragma omp simd
    for (std::int64_t i = 0; i < n; ++i) y[i] *= fn.scale;
  }
}

}  // namespace collage::native
