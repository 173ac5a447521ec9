// GridSample (opsets 16 and 20) over two spatial axes: each output position
// reads X at the point the grid gives it, a pair (x, y) normalized to
// [-1, 1] over the input's width and height.
//
// The point is first mapped to pixels: with align_corners, -1 and 1 are the
// centres of the corner pixels, (g + 1) / 2 * (size - 1); without, they are
// the outer edges of the corner pixels, ((g + 1) * size - 1) / 2. Nearest
// then rounds it (halves to even). The padding mode decides what a point
// outside the image (those bounds, on either axis) reads: zeros reads 0
// there; border clamps the point, on both axes, to the centres of the edge
// pixels; reflection mirrors it about the bounds as often as it takes to
// fall inside. Linear then blends the two pixels
// around the point on each axis, and cubic the four, with Keys' kernel
// (a = -0.75); each of those taps reads through the padding mode as well.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <string>

#include "collage/backends/native/compute_kernels.h"
#include "collage/ir/error.h"

namespace collage::native {
namespace {

enum class SampleMode { kNearest, kLinear, kCubic };
enum class Padding { kZeros, kBorder, kReflection };

std::optional<SampleMode> sample_mode(const Graph& graph, const Node& node) {
  const std::string mode =
      node.attributes.get_string("mode", graph.opset >= 20 ? "linear" : "bilinear");
  if (mode == "nearest") return SampleMode::kNearest;
  if (mode == "bilinear" || mode == "linear") return SampleMode::kLinear;
  if (mode == "bicubic" || mode == "cubic") return SampleMode::kCubic;
  return std::nullopt;
}

std::optional<Padding> padding_mode(const Node& node) {
  const std::string mode = node.attributes.get_string("padding_mode", "zeros");
  if (mode == "zeros") return Padding::kZeros;
  if (mode == "border") return Padding::kBorder;
  if (mode == "reflection") return Padding::kReflection;
  return std::nullopt;
}

// `x` mirrored about `low` and `high` until it lies between them.
double reflect(double x, double low, double high) {
  const double range = high - low;
  if (range <= 0) return low;
  if (x < low) {
    const double distance = low - x;
    const auto folds = static_cast<std::int64_t>(distance / range);
    const double rest = distance - static_cast<double>(folds) * range;
    return folds % 2 == 0 ? low + rest : high - rest;
  }
  if (x > high) {
    const double distance = x - high;
    const auto folds = static_cast<std::int64_t>(distance / range);
    const double rest = distance - static_cast<double>(folds) * range;
    return folds % 2 == 0 ? high - rest : low + rest;
  }
  return x;
}

// One spatial axis of the input: its size and where reflection folds.
struct SampleAxis {
  std::int64_t size;
  double low;
  double high;

  SampleAxis(std::int64_t extent, bool align_corners)
      : size(extent),
        low(align_corners ? 0.0 : -0.5),
        high(align_corners ? static_cast<double>(extent) - 1 : static_cast<double>(extent) - 0.5) {}

  double unnormalize(double g, bool align_corners) const {
    const auto n = static_cast<double>(size);
    return align_corners ? (g + 1) / 2 * (n - 1) : ((g + 1) * n - 1) / 2;
  }

  bool holds(double x) const { return x >= low && x <= high; }

  // The point as the padding mode moves it before interpolation, when the
  // point lies outside the image on either axis.
  double pad_point(double x, Padding padding) const {
    if (padding == Padding::kBorder) return std::clamp(x, 0.0, static_cast<double>(size - 1));
    if (padding == Padding::kReflection) return reflect(x, low, high);
    return x;
  }

  // The pixel a tap at `index` reads; -1 for a zero.
  std::int64_t tap(std::int64_t index, Padding padding) const {
    if (index >= 0 && index < size) return index;
    switch (padding) {
      case Padding::kZeros:
        return -1;
      case Padding::kBorder:
        return std::clamp<std::int64_t>(index, 0, size - 1);
      case Padding::kReflection:
        return std::clamp<std::int64_t>(
            static_cast<std::int64_t>(reflect(static_cast<double>(index), low, high)), 0, size - 1);
    }
    return -1;
  }
};

// Keys' cubic weights of the four taps floor(x) - 1 .. floor(x) + 2, for
// t = x - floor(x).
std::array<double, 4> cubic_weights(double t) {
  constexpr double a = -0.75;
  const auto outer = [](double d) { return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a; };
  const auto inner = [](double d) { return ((a + 2) * d - (a + 3)) * d * d + 1; };
  return {outer(t + 1), inner(t), inner(1 - t), outer(2 - t)};
}

// Taps of one axis for a point: pixel indices (-1 reads zero) and weights.
struct Taps {
  std::array<std::int64_t, 4> index{};
  std::array<double, 4> weight{};
  int count = 0;
};

Taps taps_for(const SampleAxis& axis, double x, SampleMode mode, Padding padding) {
  Taps taps;
  if (mode == SampleMode::kNearest) {
    taps.index[0] = axis.tap(static_cast<std::int64_t>(x), padding);
    taps.weight[0] = 1;
    taps.count = 1;
    return taps;
  }
  const double base = std::floor(x);
  const double t = x - base;
  const auto first = static_cast<std::int64_t>(base);
  if (mode == SampleMode::kLinear) {
    taps.index = {axis.tap(first, padding), axis.tap(first + 1, padding), 0, 0};
    taps.weight = {1 - t, t, 0, 0};
    taps.count = 2;
    return taps;
  }
  taps.weight = cubic_weights(t);
  for (int k = 0; k < 4; ++k)
    taps.index[static_cast<std::size_t>(k)] = axis.tap(first - 1 + k, padding);
  taps.count = 4;
  return taps;
}

void run_grid_sample(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                     std::span<Tensor> outputs, int threads) {
  const Tensor& x = inputs[0];
  const Tensor& grid = inputs[1];
  Tensor& y = outputs[0];
  const Shape& xs = x.shape();
  const Shape& gs = grid.shape();
  if (x.rank() != 4 || grid.rank() != 4 || gs[0] != xs[0] || gs[3] != 2) {
    throw Error(
        fmt::format("grid {} does not fit input {}", shape_to_string(gs), shape_to_string(xs)),
        {.node = node.name});
  }
  const Shape expected{xs[0], xs[1], gs[1], gs[2]};
  if (y.shape() != expected) {
    throw Error(fmt::format("output {} differs from {}", shape_to_string(y.shape()),
                            shape_to_string(expected)),
                {.node = node.name});
  }
  const SampleMode mode = *sample_mode(graph, node);
  const Padding padding = *padding_mode(node);
  const bool align = node.attributes.get_int("align_corners", 0) != 0;
  const std::int64_t batch = xs[0];
  const std::int64_t channels = xs[1];
  const SampleAxis height(xs[2], align);
  const SampleAxis width(xs[3], align);
  const std::int64_t points = gs[1] * gs[2];
  const std::int64_t plane = xs[2] * xs[3];
  const float* xd = x.data<float>();
  const float* gd = grid.data<float>();
  float* yd = y.data<float>();
#pragma omp parallel for collapse(2) schedule(static) \
    num_threads(loop_threads(batch* points, channels * 16, threads))
  for (std::int64_t n = 0; n < batch; ++n) {
    for (std::int64_t p = 0; p < points; ++p) {
      const float* g = gd + (n * points + p) * 2;
      double px = width.unnormalize(g[0], align);
      double py = height.unnormalize(g[1], align);
      if (mode == SampleMode::kNearest) {
        px = std::nearbyint(px);
        py = std::nearbyint(py);
      }
      if (!width.holds(px) || !height.holds(py)) {
        px = width.pad_point(px, padding);
        py = height.pad_point(py, padding);
      }
      const Taps across = taps_for(width, px, mode, padding);
      const Taps down = taps_for(height, py, mode, padding);
      for (std::int64_t c = 0; c < channels; ++c) {
        const float* image = xd + (n * channels + c) * plane;
        double sum = 0;
        for (int i = 0; i < down.count; ++i) {
          const std::int64_t row = down.index[static_cast<std::size_t>(i)];
          if (row < 0) continue;
          double row_sum = 0;
          for (int j = 0; j < across.count; ++j) {
            const std::int64_t col = across.index[static_cast<std::size_t>(j)];
            if (col < 0) continue;
            row_sum += across.weight[static_cast<std::size_t>(j)] * image[row * xs[3] + col];
          }
          sum += down.weight[static_cast<std::size_t>(i)] * row_sum;
        }
        yd[(n * channels + c) * points + p] = static_cast<float>(sum);
      }
    }
  }
}

bool check_grid_sample(const Graph& graph, const Node& node) {
  if (node.inputs.size() != 2 || node.outputs.size() != 1) return false;
  if (!is_float32(graph, node.input(0)) || !is_float32(graph, node.input(1)) ||
      !is_float32(graph, node.outputs[0])) {
    return false;
  }
  const std::int64_t align = node.attributes.get_int("align_corners", 0);
  return graph.type(node.input(0)).rank() == 4 && graph.type(node.input(1)).rank() == 4 &&
         sample_mode(graph, node) && padding_mode(node) && (align == 0 || align == 1);
}

constexpr OpEntry kGridSampleOps[] = {
    {"GridSample", run_grid_sample, check_grid_sample},
};

}  // namespace

std::span<const OpEntry> grid_sample_ops() { return kGridSampleOps; }

}  // namespace collage::native
