// Elementwise ops: one expression of the inputs at the same index (unary
// ops), or at the index broadcast to the output (binary ops).
#include <fmt/format.h>

#include <limits>

#include "collage/backends/halide/constants.h"
#include "collage/backends/halide/lowerer.h"
#include "collage/ir/error.h"

namespace collage::halide {

using Halide::Expr;
using Halide::Var;

namespace {

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

}  // namespace

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

}  // namespace collage::halide
