// Activation: an elementwise function that ends a fused library call
// (conv+bias+relu, gemm+gelu).
//
// Only functions of one element with constant parameters qualify: they can
// be applied to a block of the output right after the bias is added, while
// the block is still in cache. The parameters come from the ONNX node at
// compile time (Clip's bounds must therefore be constants).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "collage/ir/graph.h"
#include "collage/ir/result.h"

namespace collage::openblas {

enum class ActivationKind {
  kRelu,
  kLeakyRelu,  // alpha
  kClip,       // [lo, hi]
  kSigmoid,
  kTanh,
  kHardSigmoid,  // clamp(alpha * x + beta, 0, 1)
  kHardSwish,
  kElu,       // alpha
  kGelu,      // exact, with erf
  kGeluTanh,  // Gelu(approximate="tanh")
  kSwish,     // x * sigmoid(alpha * x)
};

struct Activation {
  ActivationKind kind = ActivationKind::kRelu;
  float alpha = 0.0f;
  float beta = 0.0f;

  // Applies the function in place to `count` elements.
  void apply(float* data, std::int64_t count) const;
};

// The op types that can become an Activation, for the fusion patterns.
std::span<const std::string_view> activation_ops();

// Whether `op_type` names an op that can become an Activation (the node may
// still be rejected by activation_from_node, e.g. a Clip with runtime bounds).
bool is_activation_op(std::string_view op_type);

// The activation computed by `node`, or why it cannot be one.
Result<Activation> activation_from_node(const Graph& graph, const Node& node);

}  // namespace collage::openblas
