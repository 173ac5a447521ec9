// Data movement: every output element is one input element, at an index
// computed from the output's (Reshape and its kin, Transpose, Concat,
// Split, Slice, Pad).
#include <algorithm>

#include "collage/backends/halide/constants.h"
#include "collage/backends/halide/lowerer.h"

namespace collage::halide {

using Halide::Expr;
using Halide::Var;

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

}  // namespace collage::halide
