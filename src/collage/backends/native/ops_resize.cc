// Resize (opsets 10-17) and Upsample (opsets 7-9): nearest, linear and
// cubic interpolation over any number of axes.
//
// Every mode is separable: an output element is a weighted sum over a
// small set of input positions per axis (1 for nearest, 2 for linear, 4 for
// cubic), and the weights multiply across axes. So the resize runs one axis
// at a time: per axis, a table gives each output position its taps (input
// index and weight), and a pass combines whole inner rows with those taps.
// Axes that shrink go first, so later passes touch less data; axes whose
// table is the identity are skipped (NCHW resizes only touch H and W).
//
// Per axis, an output index i maps to an input coordinate x by the
// coordinate_transformation_mode; nearest rounds x by nearest_mode, linear
// clamps x to the input and blends its two neighbours, cubic uses Keys'
// kernel with coefficient cubic_coeff_a on four neighbours (clamped to the
// edge, or dropped and renormalized with exclude_outside).
// tf_crop_and_resize maps through the roi box and writes
// extrapolation_value wherever x falls outside the input. Resize-10 and
// Upsample behave as asymmetric with floor rounding. Resize of 8-bit values
// (opset 11 on) resizes them in float32 and rounds (resizes_eight_bit).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "collage/backends/native/broadcast.h"
#include "collage/backends/native/compute_kernels.h"
#include "collage/backends/native/quantize_math.h"
#include "collage/ir/error.h"

namespace collage::native {
namespace {

enum class Mode { kNearest, kLinear, kCubic };

struct ResizeOptions {
  Mode mode = Mode::kNearest;
  std::string coordinates = "half_pixel";
  std::string nearest = "round_prefer_floor";
  double cubic_a = -0.75;
  bool exclude_outside = false;
  float extrapolation = 0.0f;
};

constexpr const char* kCoordinateModes[] = {"half_pixel",           "pytorch_half_pixel",
                                            "align_corners",        "asymmetric",
                                            "tf_half_pixel_for_nn", "tf_crop_and_resize"};
constexpr const char* kNearestModes[] = {"round_prefer_floor", "round_prefer_ceil", "floor",
                                         "ceil"};

bool one_of(const std::string& value, std::span<const char* const> choices) {
  return std::any_of(choices.begin(), choices.end(),
                     [&](const char* choice) { return value == choice; });
}

std::optional<Mode> parse_mode(const std::string& mode) {
  if (mode == "nearest") return Mode::kNearest;
  if (mode == "linear" || mode == "bilinear") return Mode::kLinear;
  if (mode == "cubic") return Mode::kCubic;
  return std::nullopt;
}

// The taps of one axis: for output position i, `width` (index, weight)
// pairs at [i * width, (i + 1) * width), or `outside[i]` when the position
// maps outside the input (tf_crop_and_resize only).
struct AxisTaps {
  int width = 1;
  std::vector<std::int64_t> index;
  std::vector<float> weight;
  std::vector<bool> outside;
  // Whether any position is outside (tf_crop_and_resize's extrapolation).
  bool any_outside = false;

  // Whether every output position takes its whole weight from the same
  // input position, so the pass would copy.
  bool is_identity(std::int64_t in, std::int64_t out) const {
    if (in != out) return false;
    for (std::int64_t i = 0; i < out; ++i) {
      if (outside[static_cast<std::size_t>(i)]) return false;
      float self = 0.0f;
      for (int t = 0; t < width; ++t) {
        const std::size_t k = static_cast<std::size_t>(i * width + t);
        if (index[k] == i) {
          self += weight[k];
        } else if (weight[k] != 0.0f) {
          return false;
        }
      }
      if (self != 1.0f) return false;
    }
    return true;
  }
};

// How one axis is scaled: `scale` for the half-pixel and asymmetric
// transforms, and the resized length for the others. With a scales input
// the ONNX reference takes that length as input * scale, which need not be
// the (integer) output size; with sizes it is the output size.
struct AxisScale {
  double scale = 1.0;
  double length = 1.0;
};

double input_coordinate(const ResizeOptions& options, std::int64_t i, std::int64_t in,
                        const AxisScale& axis, double roi_start, double roi_end) {
  const std::string& mode = options.coordinates;
  const double x = static_cast<double>(i);
  const double scale = axis.scale;
  if (mode == "half_pixel") return (x + 0.5) / scale - 0.5;
  if (mode == "pytorch_half_pixel") return axis.length > 1.0 ? (x + 0.5) / scale - 0.5 : 0.0;
  if (mode == "align_corners") {
    return axis.length == 1.0 ? 0.0 : x * static_cast<double>(in - 1) / (axis.length - 1.0);
  }
  if (mode == "asymmetric") return x / scale;
  if (mode == "tf_half_pixel_for_nn") return (x + 0.5) / scale;
  // tf_crop_and_resize
  const double extent = static_cast<double>(in - 1);
  if (axis.length == 1.0) return 0.5 * (roi_start + roi_end) * extent;
  return roi_start * extent + x * (roi_end - roi_start) * extent / (axis.length - 1.0);
}

std::int64_t round_nearest(const std::string& mode, double x) {
  const double floor = std::floor(x);
  if (mode == "floor") return static_cast<std::int64_t>(floor);
  if (mode == "ceil") return static_cast<std::int64_t>(std::ceil(x));
  if (x - floor == 0.5) {
    return static_cast<std::int64_t>(mode == "round_prefer_ceil" ? floor + 1.0 : floor);
  }
  return static_cast<std::int64_t>(std::round(x));
}

// Keys' cubic convolution kernel at distance d (>= 0) with coefficient a.
double cubic_weight(double d, double a) {
  if (d <= 1.0) return ((a + 2.0) * d - (a + 3.0)) * d * d + 1.0;
  if (d < 2.0) return ((a * d - 5.0 * a) * d + 8.0 * a) * d - 4.0 * a;
  return 0.0;
}

AxisTaps axis_taps(const ResizeOptions& options, std::int64_t in, std::int64_t out,
                   const AxisScale& scale, double roi_start, double roi_end) {
  AxisTaps taps;
  taps.width = options.mode == Mode::kNearest ? 1 : options.mode == Mode::kLinear ? 2 : 4;
  const std::size_t count = static_cast<std::size_t>(out * taps.width);
  taps.index.assign(count, 0);
  taps.weight.assign(count, 0.0f);
  taps.outside.assign(static_cast<std::size_t>(out), false);
  const bool crop = options.coordinates == "tf_crop_and_resize";
  auto clamp = [in](std::int64_t i) { return std::clamp<std::int64_t>(i, 0, in - 1); };
  for (std::int64_t i = 0; i < out; ++i) {
    const double x = input_coordinate(options, i, in, scale, roi_start, roi_end);
    std::int64_t* index = taps.index.data() + i * taps.width;
    float* weight = taps.weight.data() + i * taps.width;
    if (crop && (x < 0.0 || x > static_cast<double>(in - 1))) {
      taps.outside[static_cast<std::size_t>(i)] = true;
      taps.any_outside = true;
      continue;
    }
    if (options.mode == Mode::kNearest) {
      index[0] = clamp(round_nearest(options.nearest, x));
      weight[0] = 1.0f;
      continue;
    }
    if (options.mode == Mode::kLinear) {
      const double xc = std::clamp(x, 0.0, static_cast<double>(in - 1));
      const std::int64_t x0 = static_cast<std::int64_t>(std::floor(xc));
      const double frac = xc - static_cast<double>(x0);
      index[0] = x0;
      index[1] = clamp(x0 + 1);
      weight[0] = static_cast<float>(1.0 - frac);
      weight[1] = static_cast<float>(frac);
      continue;
    }
    const double floor = std::floor(x);
    const double frac = x - floor;
    const std::int64_t x0 = static_cast<std::int64_t>(floor);
    double w[4];
    double total = 0.0;
    for (int t = 0; t < 4; ++t) {
      const std::int64_t position = x0 - 1 + t;
      w[t] = cubic_weight(std::fabs(frac - static_cast<double>(t - 1)), options.cubic_a);
      if (options.exclude_outside && (position < 0 || position >= in)) w[t] = 0.0;
      total += w[t];
      index[t] = clamp(position);
    }
    for (int t = 0; t < 4; ++t) {
      weight[t] = static_cast<float>(options.exclude_outside ? w[t] / total : w[t]);
    }
  }
  return taps;
}

// One row of the innermost pass with kWidth taps per element (unrolled:
// with the width known only at run time the tap loop stays a loop).
template <int kWidth>
void resample_row(const float* base, float* row, std::int64_t out, const std::int64_t* index,
                  const float* weight) {
  for (std::int64_t i = 0; i < out; ++i) {
    float sum = weight[i * kWidth] * base[index[i * kWidth]];
    for (int t = 1; t < kWidth; ++t) sum += weight[i * kWidth + t] * base[index[i * kWidth + t]];
    row[i] = sum;
  }
}

// Resamples the innermost axis: one output row per unit, each element a sum
// over its taps. Looping over whole rows keeps the per-element work to the
// taps themselves, without a loop unit (and its index arithmetic) per
// element.
void resample_innermost(const float* src, float* dst, std::int64_t rows, std::int64_t in,
                        std::int64_t out, const AxisTaps& taps, float extrapolation, int threads) {
  const int width = taps.width;
  const std::int64_t* index = taps.index.data();
  const float* weight = taps.weight.data();
#pragma omp parallel for num_threads(loop_threads(rows, out* width, threads)) schedule(static)
  for (std::int64_t r = 0; r < rows; ++r) {
    const float* base = src + r * in;
    float* row = dst + r * out;
    if (width == 2) {
      resample_row<2>(base, row, out, index, weight);
    } else if (width == 4) {
      resample_row<4>(base, row, out, index, weight);
    } else {
      resample_row<1>(base, row, out, index, weight);
    }
    if (!taps.any_outside) continue;
    for (std::int64_t i = 0; i < out; ++i) {
      if (taps.outside[static_cast<std::size_t>(i)]) row[i] = extrapolation;
    }
  }
}

// Rows of at most this many floats take resample_axis's short-row loop.
constexpr std::int64_t kShortInner = 64;

// One pass of a linear or cubic resize (nearest is resize_nearest):
// resamples axis `axis` of `src` (shape `dims`) into `dst`.
void resample_axis(const float* src, float* dst, const Shape& dims, std::size_t axis,
                   std::int64_t out, const AxisTaps& taps, float extrapolation, int threads) {
  std::int64_t outer = 1, inner = 1;
  for (std::size_t d = 0; d < axis; ++d) outer *= dims[d];
  for (std::size_t d = axis + 1; d < dims.size(); ++d) inner *= dims[d];
  const std::int64_t in = dims[axis];
  if (inner == 1) {
    resample_innermost(src, dst, outer, in, out, taps, extrapolation, threads);
    return;
  }
  const int width = taps.width;
  if (inner <= kShortInner && width == 2) {
    // Rows of a few floats (a pixel's lanes, in a layout): each outer block
    // walks its output positions in turn, without the division per row.
#pragma omp parallel for num_threads(loop_threads(outer, out* inner* width, threads)) \
    schedule(static)
    for (std::int64_t o = 0; o < outer; ++o) {
      const float* base = src + o * in * inner;
      for (std::int64_t i = 0; i < out; ++i) {
        float* row = dst + (o * out + i) * inner;
        if (taps.outside[static_cast<std::size_t>(i)]) {
          std::fill(row, row + inner, extrapolation);
          continue;
        }
        const float* first = base + taps.index[static_cast<std::size_t>(2 * i)] * inner;
        const float* second = base + taps.index[static_cast<std::size_t>(2 * i + 1)] * inner;
        const float w0 = taps.weight[static_cast<std::size_t>(2 * i)];
        const float w1 = taps.weight[static_cast<std::size_t>(2 * i + 1)];
#pragma omp simd
        for (std::int64_t k = 0; k < inner; ++k) row[k] = w0 * first[k] + w1 * second[k];
      }
    }
    return;
  }
  const std::int64_t units = outer * out;
#pragma omp parallel for num_threads(loop_threads(units, inner* width, threads)) schedule(static)
  for (std::int64_t unit = 0; unit < units; ++unit) {
    const std::int64_t o = unit / out;
    const std::int64_t i = unit % out;
    float* row = dst + unit * inner;
    if (taps.outside[static_cast<std::size_t>(i)]) {
      std::fill(row, row + inner, extrapolation);
      continue;
    }
    const std::int64_t* index = taps.index.data() + i * width;
    const float* weight = taps.weight.data() + i * width;
    const float* base = src + o * in * inner;
    const float* first = base + index[0] * inner;
    const float w0 = weight[0];
#pragma omp simd
    for (std::int64_t k = 0; k < inner; ++k) row[k] = w0 * first[k];
    for (int t = 1; t < width; ++t) {
      const float* tap = base + index[t] * inner;
      const float wt = weight[t];
#pragma omp simd
      for (std::int64_t k = 0; k < inner; ++k) row[k] += wt * tap[k];
    }
  }
}

// Nearest resize in one pass: each output row (every axis but the last)
// reads one input row, found from the taps of the outer axes, and gathers
// its last axis. No intermediate tensor, unlike one pass per axis (a 2x
// upsampling of 1x96x80x80 took 9.3 ms at 2 threads with a loop unit per
// output element).
void resize_nearest(const float* src, const Shape& in, float* dst, const Shape& out,
                    const std::vector<AxisTaps>& taps, float extrapolation, int threads) {
  const std::size_t rank = in.size();
  const std::int64_t out_last = out[rank - 1];
  const std::int64_t rows = out_last == 0 ? 0 : shape_numel(out) / out_last;
  const std::vector<std::int64_t> in_strides = row_major_strides(in);
  const AxisTaps& last = taps[rank - 1];
  const std::int64_t* index = last.index.data();
  // Where the last axis's positions read runs of consecutive input (each
  // pixel's lanes of a tensor stored in runs of channels), a row is copied
  // run by run.
  struct CopyRun {
    std::int64_t from, to, count;
  };
  std::vector<CopyRun> runs;
  if (!last.any_outside && out_last > 0) {
    for (std::int64_t i = 0; i < out_last; ++i) {
      if (!runs.empty() && runs.back().from + runs.back().count == index[i]) {
        ++runs.back().count;
      } else {
        runs.push_back({index[i], i, 1});
      }
    }
    // Runs of a few floats cost more than the gather they replace.
    if (static_cast<std::int64_t>(runs.size()) * 8 > out_last) runs.clear();
  }
#pragma omp parallel for num_threads(loop_threads(rows, out_last, threads)) schedule(static)
  for (std::int64_t r = 0; r < rows; ++r) {
    float* row = dst + r * out_last;
    std::int64_t offset = 0;
    bool outside = false;
    std::int64_t rest = r;
    for (std::size_t d = rank - 1; d-- > 0;) {
      const auto i = static_cast<std::size_t>(rest % out[d]);
      rest /= out[d];
      outside = outside || taps[d].outside[i];
      offset += taps[d].index[i] * in_strides[d];
    }
    if (outside) {
      std::fill(row, row + out_last, extrapolation);
      continue;
    }
    const float* base = src + offset;
    if (!runs.empty()) {
      for (const CopyRun& run : runs) std::copy_n(base + run.from, run.count, row + run.to);
    } else if (!last.any_outside) {
      for (std::int64_t i = 0; i < out_last; ++i) row[i] = base[index[i]];
    } else {
      for (std::int64_t i = 0; i < out_last; ++i) {
        row[i] = last.outside[static_cast<std::size_t>(i)] ? extrapolation : base[index[i]];
      }
    }
  }
}

// The taps of `n` positions that each take their own input position.
AxisTaps identity_taps(std::int64_t n) {
  AxisTaps taps;
  taps.index.resize(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) taps.index[static_cast<std::size_t>(i)] = i;
  taps.weight.assign(static_cast<std::size_t>(n), 1.0f);
  taps.outside.assign(static_cast<std::size_t>(n), false);
  return taps;
}

// The taps of an axis whose every position holds `lanes` consecutive values
// (a pixel of a tensor stored in runs of channels): position i * lanes + l
// takes lane l of the positions `taps` gives i.
AxisTaps lane_taps(const AxisTaps& taps, std::int64_t lanes) {
  AxisTaps merged;
  merged.width = taps.width;
  merged.any_outside = taps.any_outside;
  const auto width = static_cast<std::size_t>(taps.width);
  const std::size_t out = taps.outside.size();
  const auto count = static_cast<std::size_t>(lanes);
  merged.index.resize(out * count * width);
  merged.weight.resize(out * count * width);
  merged.outside.resize(out * count);
  for (std::size_t i = 0; i < out; ++i) {
    for (std::size_t l = 0; l < count; ++l) {
      const std::size_t at = i * count + l;
      merged.outside[at] = taps.outside[i];
      for (std::size_t t = 0; t < width; ++t) {
        merged.index[at * width + t] =
            taps.index[i * width + t] * lanes + static_cast<std::int64_t>(l);
        merged.weight[at * width + t] = taps.weight[i * width + t];
      }
    }
  }
  return merged;
}

void resize_with_taps(const float* src, Shape in_dims, float* dst, const Shape& out_dims,
                      std::vector<AxisTaps> taps, const ResizeOptions& options, int threads);

// Resizes `x` into `y` given per-axis scales (used by the coordinate
// transforms) and the roi box (tf_crop_and_resize). With `lanes` > 0, x
// and y are 4-D and stored in runs of `lanes` channels ([N * C / lanes, H,
// W, lanes]: channels-last or blocked, layout_ops.h), with N and C kept:
// the same taps then act on H and on W's pixels of lanes.
void resize(const Tensor& x, Tensor& y, const std::vector<AxisScale>& scales,
            const std::vector<double>& roi, const ResizeOptions& options, int threads,
            std::int64_t lanes = 0) {
  const std::size_t rank = x.shape().size();
  std::vector<AxisTaps> taps(rank);
  for (std::size_t d = 0; d < rank; ++d) {
    taps[d] = axis_taps(options, x.shape()[d], y.shape()[d], scales[d], roi[d], roi[rank + d]);
  }
  if (lanes == 0) {
    resize_with_taps(x.data<float>(), x.shape(), y.data<float>(), y.shape(), std::move(taps),
                     options, threads);
    return;
  }
  const Shape& in = x.shape();
  const Shape& out = y.shape();
  if (rank != 4 || !taps[0].is_identity(in[0], out[0]) || !taps[1].is_identity(in[1], out[1]) ||
      in[1] % lanes != 0) {
    throw Error("a Resize in runs of channels keeps the batch and the channels");
  }
  const std::int64_t runs = in[0] * in[1] / lanes;
  if (options.mode == Mode::kNearest) {
    // One pass that copies runs of a row's pixels: W and the lanes as one
    // axis, each position taking its lane.
    std::vector<AxisTaps> laid{identity_taps(runs), std::move(taps[2]), lane_taps(taps[3], lanes)};
    resize_with_taps(x.data<float>(), Shape{runs, in[2], in[3] * lanes}, y.data<float>(),
                     Shape{runs, out[2], out[3] * lanes}, std::move(laid), options, threads);
    return;
  }
  // Linear and cubic: the lanes an axis of their own, so that W's pass
  // blends whole pixels of lanes with vector instructions instead of
  // gathering float by float (2x bilinear of 64x40x40 in nChw16c: 0.137 ms
  // gathering).
  std::vector<AxisTaps> laid{identity_taps(runs), std::move(taps[2]), std::move(taps[3]),
                             identity_taps(lanes)};
  resize_with_taps(x.data<float>(), Shape{runs, in[2], in[3], lanes}, y.data<float>(),
                   Shape{runs, out[2], out[3], lanes}, std::move(laid), options, threads);
}

// resize's passes over `src` of `in_dims` into `dst` of `out_dims`, given
// each axis's taps.
void resize_with_taps(const float* src, Shape in_dims, float* dst, const Shape& out_dims,
                      std::vector<AxisTaps> taps, const ResizeOptions& options, int threads) {
  const std::size_t rank = in_dims.size();
  std::vector<std::size_t> axes;
  for (std::size_t d = 0; d < rank; ++d) {
    if (!taps[d].is_identity(in_dims[d], out_dims[d])) axes.push_back(d);
  }
  if (axes.empty()) {
    std::memcpy(dst, src, static_cast<std::size_t>(shape_numel(in_dims)) * sizeof(float));
    return;
  }
  if (options.mode == Mode::kNearest) {
    resize_nearest(src, in_dims, dst, out_dims, taps, options.extrapolation, threads);
    return;
  }
  // Shrinking axes first: every later pass then reads and writes less. Of
  // the others, the innermost axis first: its pass gathers element by
  // element where the others blend whole rows with vector instructions, so
  // it should run on the tensor before the others grow it. (Upsampling
  // 1x21x14x14 to 224x224 bilinearly, the innermost pass last took 2.6 ms
  // at 2 threads.)
  const std::size_t innermost = rank - 1;
  auto growth = [&](std::size_t axis) {
    const double ratio = static_cast<double>(out_dims[axis]) / static_cast<double>(in_dims[axis]);
    return axis == innermost ? std::min(ratio, 1.0) : ratio;
  };
  std::stable_sort(axes.begin(), axes.end(),
                   [&](std::size_t a, std::size_t b) { return growth(a) < growth(b); });
  Shape dims = std::move(in_dims);
  // Between passes, grow-only buffers of this thread: a new one each call
  // was mapped and faulted in each time (a third of a 2x bilinear
  // upsampling of 64x40x40).
  thread_local std::vector<float> buffers[2];
  for (std::size_t p = 0; p < axes.size(); ++p) {
    const std::size_t axis = axes[p];
    Shape next = dims;
    next[axis] = out_dims[axis];
    float* pass_dst = dst;
    if (p + 1 < axes.size()) {
      std::vector<float>& buffer = buffers[p % 2];
      buffer.resize(static_cast<std::size_t>(shape_numel(next)));
      pass_dst = buffer.data();
    }
    resample_axis(src, pass_dst, dims, axis, next[axis], taps[axis], options.extrapolation,
                  threads);
    src = pass_dst;
    dims = next;
  }
}

// Per-axis scales from a scales tensor, or from the output/input sizes.
std::vector<AxisScale> axis_scales(const Node& node, const Tensor* scales, const Tensor& x,
                                   const Tensor& y) {
  const std::size_t rank = x.shape().size();
  std::vector<AxisScale> result(rank);
  if (scales != nullptr && scales->numel() > 0) {
    if (static_cast<std::size_t>(scales->numel()) != rank) {
      throw Error(fmt::format("{} scales for rank {}", scales->numel(), rank),
                  {.node = node.name, .field = "scales"});
    }
    for (std::size_t d = 0; d < rank; ++d) {
      const double scale = scales->number_at(static_cast<std::int64_t>(d));
      if (!(scale > 0.0)) {
        throw Error("scales must be positive", {.node = node.name, .field = "scales"});
      }
      result[d] = AxisScale{scale, static_cast<double>(x.shape()[d]) * scale};
    }
    return result;
  }
  for (std::size_t d = 0; d < rank; ++d) {
    const double in = static_cast<double>(x.shape()[d]);
    const double out = static_cast<double>(y.shape()[d]);
    result[d] = AxisScale{in == 0.0 ? 1.0 : out / in, out};
  }
  return result;
}

void check_shapes(const Node& node, const Tensor& x, const Tensor& y) {
  if (x.rank() != y.rank()) {
    throw Error(fmt::format("output {} and input {} differ in rank", y.type().to_string(),
                            x.type().to_string()),
                {.node = node.name});
  }
  for (int d = 0; d < x.rank(); ++d) {
    if (x.shape()[d] == 0 && y.shape()[d] != 0) {
      throw Error("cannot resize an empty axis", {.node = node.name});
    }
  }
}

// Resize-10 and Upsample: asymmetric coordinates, nearest rounds down.
ResizeOptions legacy_options(const Node& node) {
  ResizeOptions options;
  options.mode = parse_mode(node.attributes.get_string("mode", "nearest")).value_or(Mode::kNearest);
  options.coordinates = "asymmetric";
  options.nearest = "floor";
  return options;
}

bool legacy_mode_supported(const Node& node) {
  const std::optional<Mode> mode = parse_mode(node.attributes.get_string("mode", "nearest"));
  return mode.has_value() && *mode != Mode::kCubic;
}

// Runs a Resize; with `lanes` > 0 its float32 input and output are stored
// in runs of that many channels (resize).
void run_resize_stored(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                       std::span<Tensor> outputs, int threads, std::int64_t lanes) {
  const Tensor& x = inputs[0];
  Tensor& y = outputs[0];
  check_shapes(node, x, y);
  const std::size_t rank = x.shape().size();
  std::vector<double> roi(2 * rank, 0.0);
  std::fill(roi.begin() + static_cast<std::ptrdiff_t>(rank), roi.end(), 1.0);
  if (graph.opset < 11) {
    const std::vector<AxisScale> scales = axis_scales(node, optional_input(inputs, 1), x, y);
    resize(x, y, scales, roi, legacy_options(node), threads, lanes);
    return;
  }
  ResizeOptions options;
  const std::string mode = node.attributes.get_string("mode", "nearest");
  const std::optional<Mode> parsed = parse_mode(mode);
  if (!parsed) throw Error("unknown mode '" + mode + "'", {.node = node.name, .field = "mode"});
  options.mode = *parsed;
  options.coordinates =
      node.attributes.get_string("coordinate_transformation_mode", options.coordinates);
  options.nearest = node.attributes.get_string("nearest_mode", options.nearest);
  options.cubic_a = node.attributes.get_float("cubic_coeff_a", -0.75f);
  options.exclude_outside = node.attributes.get_int("exclude_outside", 0) != 0;
  options.extrapolation = node.attributes.get_float("extrapolation_value", 0.0f);
  if (options.coordinates == "tf_crop_and_resize") {
    const Tensor* roi_input = optional_input(inputs, 1);
    if (roi_input == nullptr || static_cast<std::size_t>(roi_input->numel()) != 2 * rank) {
      throw Error("tf_crop_and_resize needs a roi of 2 * rank values",
                  {.node = node.name, .field = "roi"});
    }
    for (std::size_t i = 0; i < 2 * rank; ++i) {
      roi[i] = roi_input->number_at(static_cast<std::int64_t>(i));
    }
  }
  const std::vector<AxisScale> scales = axis_scales(node, optional_input(inputs, 2), x, y);
  if (x.dtype() == DType::kFloat32) {
    resize(x, y, scales, roi, options, threads, lanes);
    return;
  }
  if (lanes > 0) throw Error("a Resize in runs of channels takes float32", {.node = node.name});
  // 8-bit values: resized in float32, rounded half to even and saturated.
  Tensor real_x = Tensor::allocate(TensorType{DType::kFloat32, x.shape()});
  Tensor real_y = Tensor::allocate(TensorType{DType::kFloat32, y.shape()});
  float* widened = real_x.data<float>();
  for (std::int64_t i = 0; i < x.numel(); ++i) widened[i] = static_cast<float>(x.number_at(i));
  resize(real_x, real_y, scales, roi, options, threads);
  const float* resized = real_y.data<float>();
  for (std::int64_t i = 0; i < y.numel(); ++i) {
    if (y.dtype() == DType::kUInt8) {
      y.data<std::uint8_t>()[i] = saturate<std::uint8_t>(resized[i]);
    } else {
      y.data<std::int8_t>()[i] = saturate<std::int8_t>(resized[i]);
    }
  }
}

void run_resize(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                std::span<Tensor> outputs, int threads) {
  run_resize_stored(graph, node, inputs, outputs, threads, 0);
}

// Whether `node` resizes 8-bit values: an int8 or uint8 input and output of
// one type (a quantized model's Resize between a DequantizeLinear and a
// QuantizeLinear of the same scale and zero point). Every mode but
// tf_crop_and_resize, whose extrapolation value is a real number, maps
// values affinely (its weights sum to 1), so resizing the 8-bit values in
// float32 and rounding computes what the dequantize-resize-quantize
// spelling does, up to float32 rounding.
bool resizes_eight_bit(const Graph& graph, const Node& node) {
  const DType x = graph.type(node.input(0)).dtype;
  return (x == DType::kUInt8 || x == DType::kInt8) && graph.type(node.outputs[0]).dtype == x &&
         graph.opset >= 11 &&
         node.attributes.get_string("coordinate_transformation_mode", "half_pixel") !=
             "tf_crop_and_resize";
}

bool check_resize(const Graph& graph, const Node& node) {
  if (node.inputs.empty() || node.outputs.size() != 1) return false;
  if (!resizes_eight_bit(graph, node) &&
      (!is_float32(graph, node.input(0)) || !float32_io(graph, node, 1))) {
    return false;
  }
  if (graph.type(node.input(0)).rank() != graph.type(node.outputs[0]).rank()) return false;
  if (graph.opset < 11) {
    return node.inputs.size() == 2 && is_float32(graph, node.input(1)) &&
           legacy_mode_supported(node);
  }
  // Opset 18 additions: antialiasing, a subset of axes, aspect-ratio policies.
  if (node.attributes.get_int("antialias", 0) != 0 || node.attributes.has("axes")) return false;
  if (node.attributes.get_string("keep_aspect_ratio_policy", "stretch") != "stretch") return false;
  if (!parse_mode(node.attributes.get_string("mode", "nearest"))) return false;
  if (!one_of(node.attributes.get_string("coordinate_transformation_mode", "half_pixel"),
              kCoordinateModes)) {
    return false;
  }
  if (!one_of(node.attributes.get_string("nearest_mode", "round_prefer_floor"), kNearestModes)) {
    return false;
  }
  const ValueId roi = node.input(1);
  const ValueId scales = node.input(2);
  const ValueId sizes = node.input(3);
  if (roi != kNoValue && !is_float32(graph, roi) && graph.type(roi).dtype != DType::kFloat64) {
    return false;
  }
  if (scales != kNoValue && !is_float32(graph, scales)) return false;
  if (sizes != kNoValue && graph.type(sizes).dtype != DType::kInt64) return false;
  const bool has_scales = scales != kNoValue && graph.type(scales).numel() > 0;
  return has_scales || sizes != kNoValue;
}

void run_upsample(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                  std::span<Tensor> outputs, int threads) {
  const Tensor& x = inputs[0];
  Tensor& y = outputs[0];
  check_shapes(node, x, y);
  const std::size_t rank = x.shape().size();
  std::vector<AxisScale> scales;
  if (node.attributes.has("scales")) {
    const std::vector<float>& values = node.attributes.get_floats("scales");
    if (values.size() != rank) {
      throw Error("scales does not match the rank", {.node = node.name, .field = "scales"});
    }
    for (std::size_t d = 0; d < rank; ++d) {
      scales.push_back(AxisScale{values[d], static_cast<double>(x.shape()[d]) * values[d]});
    }
  } else {
    scales = axis_scales(node, optional_input(inputs, 1), x, y);
  }
  std::vector<double> roi(2 * rank, 0.0);
  resize(x, y, scales, roi, legacy_options(node), threads);
}

bool check_upsample(const Graph& graph, const Node& node) {
  if (node.inputs.empty() || node.outputs.size() != 1) return false;
  if (!is_float32(graph, node.input(0)) || !float32_io(graph, node, 1)) return false;
  if (graph.type(node.input(0)).rank() != graph.type(node.outputs[0]).rank()) return false;
  const bool scales_input = node.inputs.size() == 2 && is_float32(graph, node.input(1));
  if (!scales_input && !node.attributes.has("scales")) return false;
  return legacy_mode_supported(node);
}

constexpr OpEntry kResizeOps[] = {
    {"Resize", run_resize, check_resize},
    {"Upsample", run_upsample, check_upsample},
};

}  // namespace

std::span<const OpEntry> resize_ops() { return kResizeOps; }

bool resize_in_lanes_fits(const Graph& graph, const Node& node) {
  if (node.op_type != "Resize" || !check_resize(graph, node)) return false;
  const TensorType& x = graph.type(node.input(0));
  const TensorType& y = graph.type(node.outputs[0]);
  return x.dtype == DType::kFloat32 && x.rank() == 4 && y.rank() == 4 && !x.at_run_time &&
         !y.at_run_time && x.shape[0] == y.shape[0] && x.shape[1] == y.shape[1];
}

void resize_in_lanes(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                     Tensor& y, std::int64_t lanes, int threads) {
  run_resize_stored(graph, node, inputs, std::span<Tensor>(&y, 1), threads, lanes);
}

}  // namespace collage::native
