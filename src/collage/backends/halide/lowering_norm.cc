// Normalizations: Softmax and LayerNormalization (statistics reduced along
// axes, then applied), and inference BatchNormalization (per channel).
#include <limits>

#include "collage/backends/halide/constants.h"
#include "collage/backends/halide/lowerer.h"

namespace collage::halide {

using Halide::Expr;
using Halide::Func;
using Halide::Var;

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

}  // namespace collage::halide
