// Reductions: Reduce* over the given axes, and the matrix products (MatMul
// and Gemm) as sums over their shared dimension.
#include <limits>

#include "collage/backends/halide/constants.h"
#include "collage/backends/halide/lowerer.h"

namespace collage::halide {

using Halide::Expr;
using Halide::Func;
using Halide::Var;

namespace {

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

}  // namespace

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

}  // namespace collage::halide
