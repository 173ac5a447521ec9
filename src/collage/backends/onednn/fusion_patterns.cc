#include "collage/backends/onednn/fusion_patterns.h"

#include <cmath>

#include "collage/backends/onednn/eltwise.h"
#include "collage/backends/onednn/node_checks.h"
#include "collage/backends/onednn/op_support.h"

namespace collage::onednn {
namespace {

bool supported(const Graph& graph, const Node& node) { return !why_unsupported(graph, node); }

// A node with an input that is a scalar constant near `expected`.
Pattern::Predicate has_scalar(double expected) {
  return [expected](const Graph& graph, const Node& node) {
    for (ValueId input : node.inputs) {
      if (is_scalar_near(graph, input, expected)) return true;
    }
    return false;
  };
}

Pattern op(const char* op_type, std::vector<Pattern> inputs = {}) {
  return Pattern::op(op_type, std::move(inputs)).where(supported);
}

Pattern any_of(const std::vector<Pattern>& alternatives) {
  Pattern result = alternatives.front();
  for (std::size_t i = 1; i < alternatives.size(); ++i) result = result | alternatives[i];
  return result;
}

// x * 0.5 * (1 + erf(x / sqrt(2))) in the orders exporters write it, with
// `x` matched on the path through erf (the other use of x is the same value).
Pattern gelu_erf(const Pattern& x) {
  const double sqrt2 = std::sqrt(2.0);
  Pattern scaled =
      Pattern::op("Div", {x, Pattern::constant()}).where(has_scalar(sqrt2)) |
      Pattern::commutative_op("Mul", x, Pattern::constant()).where(has_scalar(1 / sqrt2));
  Pattern plus_one =
      Pattern::commutative_op("Add", Pattern::op("Erf", {scaled}), Pattern::constant())
          .where(has_scalar(1.0));
  Pattern any = Pattern::wildcard();
  Pattern half = Pattern::constant();
  return any_of({
      Pattern::commutative_op("Mul", Pattern::commutative_op("Mul", any, plus_one), half)
          .where(has_scalar(0.5)),
      Pattern::commutative_op(
          "Mul", any, Pattern::commutative_op("Mul", plus_one, half).where(has_scalar(0.5))),
      Pattern::commutative_op(
          "Mul", Pattern::commutative_op("Mul", any, half).where(has_scalar(0.5)), plus_one),
  });
}

Pattern activation(const Pattern& x) {
  std::vector<Pattern> alternatives;
  for (const std::string& type : activation_ops()) alternatives.push_back(op(type.c_str(), {x}));
  alternatives.push_back(gelu_erf(x));
  return any_of(alternatives);
}

Pattern bias_add(const Pattern& x) {
  return Pattern::commutative_op("Add", x, Pattern::constant()).where(supported);
}

Pattern residual_add(const Pattern& x) {
  return Pattern::commutative_op("Add", x, Pattern::wildcard()).where(supported);
}

// anchor, then optionally a bias, a residual add and an activation.
Pattern post_op_chain(const Pattern& anchor) {
  return anchor.optional(bias_add).optional(residual_add).optional(activation);
}

}  // namespace

std::vector<NamedPattern> fusion_patterns() {
  Pattern binary = any_of({op("Add"), op("Sub"), op("Mul"), op("Div"), op("Max"), op("Min")});
  return {
      {"onednn.conv_bias_add_activation", post_op_chain(op("Conv"))},
      {"onednn.conv_transpose_bias_add_activation", post_op_chain(op("ConvTranspose"))},
      {"onednn.matmul_bias_add_activation", post_op_chain(op("MatMul"))},
      {"onednn.gemm_add_activation", op("Gemm").optional(residual_add).optional(activation)},
      {"onednn.binary_activation", activation(binary)},
      {"onednn.batchnorm_relu", op("Relu", {op("BatchNormalization")})},
      {"onednn.gelu_erf", gelu_erf(Pattern::wildcard())},
  };
}

}  // namespace collage::onednn
