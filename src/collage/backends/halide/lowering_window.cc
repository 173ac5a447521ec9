// Window ops: convolution and pooling (a reduction over a window of the
// input, with padded reads), and global pooling (over all of each channel).
#include <limits>

#include "collage/backends/halide/lowerer.h"
#include "collage/ir/window.h"

namespace collage::halide {

using Halide::Expr;
using Halide::Func;
using Halide::Var;

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

}  // namespace collage::halide
