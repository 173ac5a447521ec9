// The float32 elementwise math of the native backend, as block functions.
//
// Every float32 elementwise op (Relu, Add, Erf, Clip, ...) is one function
// that computes a block of n outputs from operand blocks, where each operand
// advances with stride 0 (a broadcast value) or 1. The unfused kernels and
// the fused loops (elementwise_fusion.h) both evaluate ops through these
// functions, so each op's math is written exactly once and fusion cannot
// change a result.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "collage/ir/graph.h"

namespace collage::native {

// The scalar parameters an op takes from its attributes or constant inputs:
// LeakyRelu/Elu/Swish alpha, Selu alpha and gamma, HardSigmoid alpha and
// beta, Clip min and max.
struct ScalarParams {
  float alpha = 0.0f;
  float beta = 0.0f;
};

// y[i] = f(x[i * x_stride]) for i < n.
using UnaryBlock = void (*)(const float* x, std::int64_t x_stride, float* y, std::int64_t n,
                            ScalarParams params);
// y[i] = f(a[i * a_stride], b[i * b_stride]) for i < n. y may alias a or b
// when that operand has stride 1.
using BinaryBlock = void (*)(const float* a, std::int64_t a_stride, const float* b,
                             std::int64_t b_stride, float* y, std::int64_t n);

// One float32 elementwise node, as the loops evaluate it: a unary function of
// its first input, or a binary function folded left over its first
// `operands` inputs (Sum, Mean, Min and Max are variadic), then a scale
// (Mean's 1/n).
struct ElementwiseFn {
  UnaryBlock unary = nullptr;
  BinaryBlock binary = nullptr;
  ScalarParams params;
  float scale = 1.0f;
  int operands = 1;
};

// The function of `node` when it is a float32 elementwise op whose inputs
// and output are all float32 and whose parameters are known without running
// the graph (Clip's bounds are attributes or constants, Gelu's approximate
// is "none" or "tanh"); nullopt otherwise.
std::optional<ElementwiseFn> float_elementwise_fn(const Graph& graph, const Node& node);

// The function of a unary op by ONNX type with explicit parameters, for ops
// whose parameters only arrive at run time (Clip with non-constant bounds);
// nullptr for an op type that is not a float unary op. Gelu is its default
// (erf) form.
UnaryBlock unary_block(std::string_view op_type);

// Applies `fn` to one block: the operands' pointers and strides (0 or 1),
// writing n results to y.
void apply_block(const ElementwiseFn& fn, const float* const* operands, const std::int64_t* strides,
                 float* y, std::int64_t n);

}  // namespace collage::native
