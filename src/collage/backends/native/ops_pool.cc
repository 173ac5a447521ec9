// MaxPool, AveragePool (1-D, 2-D, 3-D; strides, pads, dilations, ceil_mode,
// auto_pad, count_include_pad) and GlobalAveragePool / GlobalMaxPool.
//
// Windowed pools run one (image, channel) plane per task. A 1-D or 2-D
// plane is first copied into a padded, phase-split PhasePlane; an output row
// is then built tap by tap, each tap combining a contiguous run of that copy
// into the row, with no bounds checks whatever the stride. 3-D planes take a
// direct loop with bounds checks. AveragePool divides by a
// per-position count that is a product of per-axis counts: the taps inside
// the input (count_include_pad = 0) or inside the padded input, up to the
// end padding (count_include_pad = 1), which is how ceil_mode windows that
// run past the padding are counted by PyTorch and ONNX Runtime.
#include <fmt/format.h>
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <limits>
#include <optional>
#include <type_traits>
#include <variant>
#include <vector>

#include "collage/backends/native/compute_kernels.h"
#include "collage/ir/error.h"

namespace collage::native {
namespace {

enum class PoolKind { kMax, kAverage };

struct PoolShape {
  std::int64_t planes;
  Window3d window;

  std::int64_t input_plane() const { return window[0].input * window[1].input * window[2].input; }
  std::int64_t output_plane() const {
    return window[0].output * window[1].output * window[2].output;
  }
};

PoolShape pool_shape(const Node& node, const Tensor& x, const Tensor& y) {
  const int spatial = x.rank() - 2;
  if (spatial < 1 || spatial > 3 || y.rank() != x.rank() || y.shape()[0] != x.shape()[0] ||
      y.shape()[1] != x.shape()[1]) {
    throw Error(
        fmt::format("output {} does not fit input {}", y.type().to_string(), x.type().to_string()),
        {.node = node.name});
  }
  Window window = forward_window_or_throw(node, Shape(x.shape().begin() + 2, x.shape().end()),
                                          node.attributes.get_ints("kernel_shape"));
  // The pools run whatever output the graph holds, as ONNX 1.12's shape
  // inference sizes it: it keeps a last ceil_mode window that starts in the
  // end padding (ONNX now drops it), and such a window reads padding only.
  for (std::size_t i = 0; i < window.rank(); ++i) window.axes[i].output = y.shape()[2 + i];
  PoolShape shape;
  shape.planes = x.shape()[0] * x.shape()[1];
  shape.window = window_3d(window);
  return shape;
}

// Per output position of one axis: how many taps an average divides by.
std::vector<float> tap_counts(const WindowAxis& axis, bool include_pad) {
  std::vector<float> counts(static_cast<std::size_t>(axis.output));
  const std::int64_t lo = include_pad ? -axis.pad_begin : 0;
  const std::int64_t hi = include_pad ? axis.input + axis.pad_end : axis.input;
  for (std::int64_t o = 0; o < axis.output; ++o) {
    std::int64_t count = 0;
    for (std::int64_t t = 0; t < axis.kernel; ++t) {
      const std::int64_t position = axis.input_at(o, t);
      if (position >= lo && position < hi) ++count;
    }
    counts[static_cast<std::size_t>(o)] = static_cast<float>(count);
  }
  return counts;
}

// One 1-D or 2-D plane from its padded, phase-split copy: each kernel tap
// combines a contiguous run of the copy into the output row.
template <PoolKind kind>
void pool_plane_2d(const PhasePlane& input, float* output, const Window3d& w,
                   const std::array<std::vector<float>, 3>& counts) {
  const WindowAxis& ah = w[1];
  const WindowAxis& aw = w[2];
  for (std::int64_t oh = 0; oh < ah.output; ++oh) {
    float* out_row = output + oh * aw.output;
    std::copy(input.tap(oh, 0, 0), input.tap(oh, 0, 0) + aw.output, out_row);
    for (std::int64_t kh = 0; kh < ah.kernel; ++kh) {
      for (std::int64_t kw = kh == 0 ? 1 : 0; kw < aw.kernel; ++kw) {
        if constexpr (kind == PoolKind::kMax) {
          max_into(out_row, input.tap(oh, kh, kw), aw.output);
        } else {
          add_into(out_row, input.tap(oh, kh, kw), aw.output);
        }
      }
    }
    if constexpr (kind == PoolKind::kAverage) {
      // A window wholly in the padding (possible with ceil_mode) averages to 0.
      const float count_h = counts[1][oh];
      const float* count_w = counts[2].data();
      for (std::int64_t ox = 0; ox < aw.output; ++ox) {
        out_row[ox] /= std::max(1.0f, count_h * count_w[ox]);
      }
    }
  }
}

// Any plane, 3-D included, with bounds checks per tap.
template <PoolKind kind>
void pool_plane_3d(const float* input, float* output, const Window3d& w,
                   const std::array<std::vector<float>, 3>& counts) {
  const WindowAxis& ad = w[0];
  const WindowAxis& ah = w[1];
  const WindowAxis& aw = w[2];
  const float init = kind == PoolKind::kMax ? -std::numeric_limits<float>::infinity() : 0.0f;
  for (std::int64_t od = 0; od < ad.output; ++od) {
    for (std::int64_t oh = 0; oh < ah.output; ++oh) {
      float* out_row = output + (od * ah.output + oh) * aw.output;
      for (std::int64_t ow = 0; ow < aw.output; ++ow) {
        float acc = init;
        for (std::int64_t kd = 0; kd < ad.kernel; ++kd) {
          const std::int64_t id = od * ad.stride - ad.pad_begin + kd * ad.dilation;
          if (id < 0 || id >= ad.input) continue;
          for (std::int64_t kh = 0; kh < ah.kernel; ++kh) {
            const std::int64_t ih = oh * ah.stride - ah.pad_begin + kh * ah.dilation;
            if (ih < 0 || ih >= ah.input) continue;
            const float* in_row = input + (id * ah.input + ih) * aw.input;
            for (std::int64_t kw = 0; kw < aw.kernel; ++kw) {
              const std::int64_t iw = ow * aw.stride - aw.pad_begin + kw * aw.dilation;
              if (iw < 0 || iw >= aw.input) continue;
              acc = kind == PoolKind::kMax ? std::max(acc, in_row[iw]) : acc + in_row[iw];
            }
          }
        }
        if constexpr (kind == PoolKind::kAverage) {
          acc /= std::max(1.0f, counts[0][od] * counts[1][oh] * counts[2][ow]);
        }
        out_row[ow] = acc;
      }
    }
  }
}

template <PoolKind kind>
void run_pool(const Node& node, std::span<const Tensor> inputs, std::span<Tensor> outputs,
              int threads) {
  const Tensor& x = inputs[0];
  Tensor& y = outputs[0];
  const PoolShape shape = pool_shape(node, x, y);
  std::array<std::vector<float>, 3> counts;
  if constexpr (kind == PoolKind::kAverage) {
    const bool include_pad = node.attributes.get_int("count_include_pad", 0) != 0;
    for (int axis = 0; axis < 3; ++axis) counts[axis] = tap_counts(shape.window[axis], include_pad);
  }
  const std::int64_t in_plane = shape.input_plane();
  const std::int64_t out_plane = shape.output_plane();
  const std::int64_t work =
      out_plane * shape.window[0].kernel * shape.window[1].kernel * shape.window[2].kernel;
  const float* xd = x.data<float>();
  float* yd = y.data<float>();
  if (out_plane == 0) return;
  const bool planar =
      shape.window[0].input == 1 && shape.window[0].kernel == 1 && shape.window[0].output == 1;
  // Padding holds values the combination ignores: -inf for a maximum, 0 for
  // a sum (the count then decides what the padding weighs).
  const float fill = kind == PoolKind::kMax ? -std::numeric_limits<float>::infinity() : 0.0f;
#pragma omp parallel num_threads(loop_threads(shape.planes, work, threads))
  {
    std::optional<PhasePlane> padded;
    if (planar) padded.emplace(shape.window[1], shape.window[2]);
#pragma omp for schedule(static)
    for (std::int64_t plane = 0; plane < shape.planes; ++plane) {
      if (planar) {
        padded->load(xd + plane * in_plane, fill);
        pool_plane_2d<kind>(*padded, yd + plane * out_plane, shape.window, counts);
      } else {
        pool_plane_3d<kind>(xd + plane * in_plane, yd + plane * out_plane, shape.window, counts);
      }
    }
  }
}

// MaxPool's values and, in `indices`, where each maximum is: its flat index
// in the whole input (planes included, padding not), its spatial axes in
// row-major order (storage_order 0) or column-major (1). A tie keeps the
// first tap in window order.
void max_pool_with_indices(const Node& node, const Tensor& x, Tensor& y, Tensor& indices,
                           int threads) {
  const PoolShape shape = pool_shape(node, x, y);
  if (indices.shape() != y.shape()) {
    throw Error("the Indices output's shape differs from the values'", {.node = node.name});
  }
  const bool column_major = node.attributes.get_int("storage_order", 0) == 1;
  const Window3d& w = shape.window;
  const std::int64_t in_plane = shape.input_plane();
  const std::int64_t out_plane = shape.output_plane();
  const float* xd = x.data<float>();
  float* yd = y.data<float>();
  std::int64_t* id_out = indices.data<std::int64_t>();
  // The spatial axes of the input as the node has them (1 to 3), innermost
  // last; Window3d pads the front with axes of one.
  const int spatial = x.rank() - 2;
  const auto flat = [&](std::int64_t d, std::int64_t h, std::int64_t v) {
    if (!column_major) return (d * w[1].input + h) * w[2].input + v;
    const std::int64_t at[3] = {d, h, v};
    const std::int64_t extent[3] = {w[0].input, w[1].input, w[2].input};
    std::int64_t index = 0;
    for (int axis = 2; axis >= 3 - spatial; --axis) index = index * extent[axis] + at[axis];
    return index;
  };
#pragma omp parallel for num_threads(loop_threads(shape.planes, out_plane, threads)) \
    schedule(static)
  for (std::int64_t plane = 0; plane < shape.planes; ++plane) {
    const float* input = xd + plane * in_plane;
    std::int64_t position = plane * out_plane;
    for (std::int64_t od = 0; od < w[0].output; ++od) {
      for (std::int64_t oh = 0; oh < w[1].output; ++oh) {
        for (std::int64_t ow = 0; ow < w[2].output; ++ow, ++position) {
          float best = -std::numeric_limits<float>::infinity();
          std::int64_t where = -1;
          for (std::int64_t kd = 0; kd < w[0].kernel; ++kd) {
            const std::int64_t id = od * w[0].stride - w[0].pad_begin + kd * w[0].dilation;
            if (id < 0 || id >= w[0].input) continue;
            for (std::int64_t kh = 0; kh < w[1].kernel; ++kh) {
              const std::int64_t ih = oh * w[1].stride - w[1].pad_begin + kh * w[1].dilation;
              if (ih < 0 || ih >= w[1].input) continue;
              for (std::int64_t kw = 0; kw < w[2].kernel; ++kw) {
                const std::int64_t iw = ow * w[2].stride - w[2].pad_begin + kw * w[2].dilation;
                if (iw < 0 || iw >= w[2].input) continue;
                const float value = input[(id * w[1].input + ih) * w[2].input + iw];
                if (where < 0 || value > best) {
                  best = value;
                  where = flat(id, ih, iw);
                }
              }
            }
          }
          yd[position] = best;
          id_out[position] = where < 0 ? -1 : plane * in_plane + where;
        }
      }
    }
  }
}

// --- Pools of a tensor stored as [groups, H, W, lanes] (pool_in_lanes).

// Every output position of row `oh`, for kGroups groups at once (`in_group`
// and `out_group` floats apart) of kPerGroup x 8 lanes each: each tap's
// values combine into registers, and a window that meets no input holds the
// fill value. A blocked layout's blocks of 8 or 16 lanes are too short to
// fill the registers alone, so they go several groups at a time.
template <PoolKind kind, int kGroups, int kPerGroup>
void pool_row_vectors(const float* in, std::int64_t in_group, float* out, std::int64_t out_group,
                      std::int64_t lanes, const WindowAxis& ah, const WindowAxis& aw,
                      std::int64_t oh, const float* count_w, float count_h) {
  constexpr int kVectors = kGroups * kPerGroup;
  const __m256 fill =
      _mm256_set1_ps(kind == PoolKind::kMax ? -std::numeric_limits<float>::infinity() : 0.0f);
  const TapRange rows = taps_inside(ah, oh);
  const std::int64_t row_stride = ah.dilation * aw.input * lanes;
  const float* first_row =
      in + (oh * ah.stride - ah.pad_begin + rows.first * ah.dilation) * aw.input * lanes;
  for (std::int64_t ow = 0; ow < aw.output; ++ow) {
    __m256 acc[kVectors];
#pragma GCC unroll 8
    for (int v = 0; v < kVectors; ++v) acc[v] = fill;
    const TapRange columns = taps_inside(aw, ow);
    const std::int64_t first_column = ow * aw.stride - aw.pad_begin + columns.first * aw.dilation;
    const float* row = first_row + first_column * lanes;
    for (std::int64_t kh = rows.first; kh < rows.end; ++kh, row += row_stride) {
      const float* tap = row;
      for (std::int64_t kw = columns.first; kw < columns.end; ++kw, tap += aw.dilation * lanes) {
#pragma GCC unroll 8
        for (int v = 0; v < kVectors; ++v) {
          const __m256 x = _mm256_loadu_ps(tap + v / kPerGroup * in_group + 8 * (v % kPerGroup));
          acc[v] = kind == PoolKind::kMax ? _mm256_max_ps(acc[v], x) : _mm256_add_ps(acc[v], x);
        }
      }
    }
    if constexpr (kind == PoolKind::kAverage) {
      const __m256 scale = _mm256_set1_ps(1.0f / std::max(1.0f, count_h * count_w[ow]));
#pragma GCC unroll 8
      for (int v = 0; v < kVectors; ++v) acc[v] = _mm256_mul_ps(acc[v], scale);
    }
#pragma GCC unroll 8
    for (int v = 0; v < kVectors; ++v) {
      _mm256_storeu_ps(out + v / kPerGroup * out_group + ow * lanes + 8 * (v % kPerGroup), acc[v]);
    }
  }
}

// The same for lanes that are not a multiple of 8, one at a time.
template <PoolKind kind>
void pool_row_scalar(const float* in, float* out, std::int64_t lanes, std::int64_t width,
                     const WindowAxis& ah, const WindowAxis& aw, std::int64_t oh,
                     const float* count_w, float count_h) {
  const float fill = kind == PoolKind::kMax ? -std::numeric_limits<float>::infinity() : 0.0f;
  const TapRange rows = taps_inside(ah, oh);
  for (std::int64_t ow = 0; ow < aw.output; ++ow) {
    float* o = out + ow * lanes;
    std::fill(o, o + width, fill);
    const TapRange columns = taps_inside(aw, ow);
    for (std::int64_t kh = rows.first; kh < rows.end; ++kh) {
      const std::int64_t ih = oh * ah.stride - ah.pad_begin + kh * ah.dilation;
      for (std::int64_t kw = columns.first; kw < columns.end; ++kw) {
        const std::int64_t iw = ow * aw.stride - aw.pad_begin + kw * aw.dilation;
        const float* tap = in + (ih * aw.input + iw) * lanes;
        for (std::int64_t l = 0; l < width; ++l) {
          o[l] = kind == PoolKind::kMax ? std::max(o[l], tap[l]) : o[l] + tap[l];
        }
      }
    }
    if constexpr (kind == PoolKind::kAverage) {
      const float scale = 1.0f / std::max(1.0f, count_h * count_w[ow]);
      for (std::int64_t l = 0; l < width; ++l) o[l] *= scale;
    }
  }
}

// A 2-D window pool of [groups, H, W, lanes] floats: one task per output
// row of a group, the lanes in runs of up to 64 held in registers.
template <PoolKind kind>
void window_pool_in_lanes(const Node& node, const Tensor& x, Tensor& y, std::int64_t lanes,
                          int threads) {
  const PoolShape shape = pool_shape(node, x, y);
  const WindowAxis& ah = shape.window[1];
  const WindowAxis& aw = shape.window[2];
  if (shape.window[0].kernel != 1 || shape.window[0].input != 1) {
    throw Error("a pool in a channels-last or blocked layout must be 2-D", {.node = node.name});
  }
  std::array<std::vector<float>, 3> counts;
  if constexpr (kind == PoolKind::kAverage) {
    const bool include_pad = node.attributes.get_int("count_include_pad", 0) != 0;
    for (int axis = 1; axis < 3; ++axis) counts[axis] = tap_counts(shape.window[axis], include_pad);
  } else {
    counts[1].assign(static_cast<std::size_t>(ah.output), 1.0f);
    counts[2].assign(static_cast<std::size_t>(aw.output), 1.0f);
  }
  const std::int64_t groups = x.numel() / (ah.input * aw.input * lanes);
  const std::int64_t in_group = ah.input * aw.input * lanes;
  const std::int64_t out_group = ah.output * aw.output * lanes;
  // Blocks of 16 or 8 lanes go four or eight groups at a time.
  const std::int64_t bundle = lanes == 16 ? 4 : lanes == 8 ? 8 : 1;
  const std::int64_t bundles = (groups + bundle - 1) / bundle;
  const std::int64_t rows = bundles * ah.output;
  const float* xd = x.data<float>();
  float* yd = y.data<float>();
  const float* count_w = counts[2].data();
  const std::int64_t row_work = bundle * aw.output * ah.kernel * aw.kernel * lanes;
#pragma omp parallel for num_threads(loop_threads(rows, row_work, threads)) schedule(static)
  for (std::int64_t row = 0; row < rows; ++row) {
    const std::int64_t first = row / ah.output * bundle;
    const std::int64_t oh = row % ah.output;
    const float count_h = counts[1][static_cast<std::size_t>(oh)];
    const float* in = xd + first * in_group;
    float* out = yd + first * out_group + oh * aw.output * lanes;
    if (first + bundle <= groups && lanes == 16) {
      pool_row_vectors<kind, 4, 2>(in, in_group, out, out_group, lanes, ah, aw, oh, count_w,
                                   count_h);
      continue;
    }
    if (first + bundle <= groups && lanes == 8) {
      pool_row_vectors<kind, 8, 1>(in, in_group, out, out_group, lanes, ah, aw, oh, count_w,
                                   count_h);
      continue;
    }
    for (std::int64_t g = first; g < std::min(groups, first + bundle); ++g) {
      const float* group_in = xd + g * in_group;
      float* group_out = yd + g * out_group + oh * aw.output * lanes;
      std::int64_t lane = 0;
      for (; lane + 64 <= lanes; lane += 64) {
        pool_row_vectors<kind, 1, 8>(group_in + lane, 0, group_out + lane, 0, lanes, ah, aw, oh,
                                     count_w, count_h);
      }
      for (; lane + 16 <= lanes; lane += 16) {
        pool_row_vectors<kind, 1, 2>(group_in + lane, 0, group_out + lane, 0, lanes, ah, aw, oh,
                                     count_w, count_h);
      }
      for (; lane + 8 <= lanes; lane += 8) {
        pool_row_vectors<kind, 1, 1>(group_in + lane, 0, group_out + lane, 0, lanes, ah, aw, oh,
                                     count_w, count_h);
      }
      if (lane < lanes) {
        pool_row_scalar<kind>(group_in + lane, group_out + lane, lanes, lanes - lane, ah, aw, oh,
                              count_w, count_h);
      }
    }
  }
}

// Combines `pixels` runs of kVectors x 8 floats, `stride` floats apart,
// into `out`: two sets of registers, for consecutive pixels, in flight.
template <PoolKind kind, int kVectors>
void combine_pixels(const float* in, std::int64_t pixels, std::int64_t stride, float* out,
                    float scale) {
  const __m256 fill =
      _mm256_set1_ps(kind == PoolKind::kMax ? -std::numeric_limits<float>::infinity() : 0.0f);
  auto combine = [](__m256 a, __m256 b) {
    return kind == PoolKind::kMax ? _mm256_max_ps(a, b) : _mm256_add_ps(a, b);
  };
  __m256 even[kVectors];
  __m256 odd[kVectors];
#pragma GCC unroll 8
  for (int v = 0; v < kVectors; ++v) even[v] = odd[v] = fill;
  std::int64_t p = 0;
  for (; p + 2 <= pixels; p += 2, in += 2 * stride) {
#pragma GCC unroll 8
    for (int v = 0; v < kVectors; ++v) {
      even[v] = combine(even[v], _mm256_loadu_ps(in + 8 * v));
      odd[v] = combine(odd[v], _mm256_loadu_ps(in + stride + 8 * v));
    }
  }
  if (p < pixels) {
#pragma GCC unroll 8
    for (int v = 0; v < kVectors; ++v) even[v] = combine(even[v], _mm256_loadu_ps(in + 8 * v));
  }
  const __m256 factor = _mm256_set1_ps(scale);
#pragma GCC unroll 8
  for (int v = 0; v < kVectors; ++v) {
    _mm256_storeu_ps(out + 8 * v, _mm256_mul_ps(combine(even[v], odd[v]), factor));
  }
}

// A global pool of [groups, pixels, lanes] floats into groups * lanes
// values: one task per group, run of 32 lanes (8 or 16 for a block) and
// piece of the pixels. Few groups and runs (channels-last, one image) split
// the pixels into pieces, whose partial results are then combined.
template <PoolKind kind>
void global_pool_in_lanes(const Tensor& x, Tensor& y, std::int64_t lanes, int threads) {
  const std::int64_t groups = x.shape()[0] * x.shape()[1] / lanes;
  const std::int64_t pixels = x.shape()[2] * x.shape()[3];
  const std::int64_t run = std::min<std::int64_t>(32, lanes);
  const std::int64_t runs = (lanes + run - 1) / run;
  const std::int64_t pieces =
      std::max<std::int64_t>(1, std::min(pixels / 256, 16 * threads / (groups * runs)));
  const std::int64_t piece_pixels = (pixels + pieces - 1) / pieces;
  const std::int64_t outputs = groups * lanes;
  const float* xd = x.data<float>();
  float* yd = y.data<float>();
  std::vector<float> partial(static_cast<std::size_t>(pieces > 1 ? pieces * outputs : 0));
  const float scale =
      kind == PoolKind::kMax || pieces > 1 ? 1.0f : 1.0f / static_cast<float>(pixels);
  const std::int64_t tasks = groups * runs * pieces;
#pragma omp parallel for num_threads(loop_threads(tasks, piece_pixels* run, threads)) \
    schedule(static)
  for (std::int64_t task = 0; task < tasks; ++task) {
    const std::int64_t piece = task % pieces;
    const std::int64_t group = task / pieces / runs;
    const std::int64_t lane = task / pieces % runs * run;
    const std::int64_t width = std::min(run, lanes - lane);
    const std::int64_t first = piece * piece_pixels;
    const std::int64_t count = std::max<std::int64_t>(0, std::min(piece_pixels, pixels - first));
    const float* in = xd + (group * pixels + first) * lanes + lane;
    float* out = (pieces > 1 ? partial.data() + piece * outputs : yd) + group * lanes + lane;
    if (width == 32) {
      combine_pixels<kind, 4>(in, count, lanes, out, scale);
    } else if (width == 16) {
      combine_pixels<kind, 2>(in, count, lanes, out, scale);
    } else if (width == 8) {
      combine_pixels<kind, 1>(in, count, lanes, out, scale);
    } else {
      const float fill = kind == PoolKind::kMax ? -std::numeric_limits<float>::infinity() : 0.0f;
      for (std::int64_t l = 0; l < width; ++l) {
        float acc = fill;
        for (std::int64_t p = 0; p < count; ++p) {
          acc = kind == PoolKind::kMax ? std::max(acc, in[p * lanes + l]) : acc + in[p * lanes + l];
        }
        out[l] = acc * scale;
      }
    }
  }
  if (pieces == 1) return;
  const float average = kind == PoolKind::kMax ? 1.0f : 1.0f / static_cast<float>(pixels);
  for (std::int64_t o = 0; o < outputs; ++o) {
    float acc = partial[static_cast<std::size_t>(o)];
    for (std::int64_t piece = 1; piece < pieces; ++piece) {
      const float value = partial[static_cast<std::size_t>(piece * outputs + o)];
      acc = kind == PoolKind::kMax ? std::max(acc, value) : acc + value;
    }
    yd[o] = acc * average;
  }
}

bool check_window_pool(const Graph& graph, const Node& node) {
  if (node.inputs.size() != 1 || node.outputs.empty() || node.outputs[0] == kNoValue) return false;
  for (std::size_t i = 1; i < node.outputs.size(); ++i) {
    // MaxPool's Indices output, as int64 and of the values' shape.
    if (node.outputs[i] == kNoValue) continue;
    if (node.op_type != "MaxPool" || i != 1 || graph.type(node.outputs[i]).dtype != DType::kInt64 ||
        graph.type(node.outputs[i]).shape != graph.type(node.outputs[0]).shape) {
      return false;
    }
  }
  const DType x_type = graph.type(node.input(0)).dtype;
  const bool eight_bit = node.op_type == "MaxPool" && node.outputs.size() == 1 &&
                         (x_type == DType::kInt8 || x_type == DType::kUInt8) &&
                         graph.type(node.outputs[0]).dtype == x_type;
  if (!eight_bit && (!is_float32(graph, node.input(0)) || !is_float32(graph, node.outputs[0]))) {
    return false;
  }
  const int rank = graph.type(node.input(0)).rank();
  if (rank < 3 || rank > 5 || graph.type(node.outputs[0]).rank() != rank) return false;
  const auto kernel = node.attributes.all().find("kernel_shape");
  if (kernel == node.attributes.all().end()) return false;
  const auto* kernel_shape = std::get_if<std::vector<std::int64_t>>(&kernel->second);
  const Shape& x = graph.type(node.input(0)).shape;
  return kernel_shape != nullptr &&
         forward_window(node, Shape(x.begin() + 2, x.end()), *kernel_shape).ok();
}

template <PoolKind kind>
void run_global_pool(const Node& node, std::span<const Tensor> inputs, std::span<Tensor> outputs,
                     int threads) {
  const Tensor& x = inputs[0];
  Tensor& y = outputs[0];
  if (x.rank() < 2 || y.rank() != x.rank() || y.shape()[0] != x.shape()[0] ||
      y.shape()[1] != x.shape()[1]) {
    throw Error(
        fmt::format("output {} does not fit input {}", y.type().to_string(), x.type().to_string()),
        {.node = node.name});
  }
  const std::int64_t planes = x.shape()[0] * x.shape()[1];
  const std::int64_t size = planes == 0 ? 0 : x.numel() / planes;
  const float* xd = x.data<float>();
  float* yd = y.data<float>();
#pragma omp parallel for num_threads(loop_threads(planes, size, threads)) schedule(static)
  for (std::int64_t plane = 0; plane < planes; ++plane) {
    const float* values = xd + plane * size;
    if constexpr (kind == PoolKind::kMax) {
      yd[plane] = row_max(values, size);
    } else {
      yd[plane] = row_sum(values, size) / static_cast<float>(size);
    }
  }
}

// MaxPool of 8-bit values (quantized models pool them without dequantizing):
// the float kernel on their exact float copies, converted back.
void max_pool_8bit(const Node& node, const Tensor& x, Tensor& y, int threads) {
  std::array<Tensor, 1> in = {Tensor::allocate(TensorType{DType::kFloat32, x.shape()})};
  std::array<Tensor, 1> out = {Tensor::allocate(TensorType{DType::kFloat32, y.shape()})};
  auto widen = [&](const auto* data) { std::copy(data, data + x.numel(), in[0].data<float>()); };
  auto narrow = [&](auto* data) {
    using T = std::remove_pointer_t<decltype(data)>;
    const float* pooled = out[0].data<float>();
    const std::int64_t y_count = y.numel();
    for (std::int64_t i = 0; i < y_count; ++i) data[i] = static_cast<T>(pooled[i]);
  };
  if (x.dtype() == DType::kInt8) {
    widen(x.data<std::int8_t>());
    run_pool<PoolKind::kMax>(node, in, out, threads);
    narrow(y.data<std::int8_t>());
  } else {
    widen(x.data<std::uint8_t>());
    run_pool<PoolKind::kMax>(node, in, out, threads);
    narrow(y.data<std::uint8_t>());
  }
}

void run_max_pool(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                  std::span<Tensor> outputs, int threads) {
  if (inputs[0].dtype() != DType::kFloat32)
    return max_pool_8bit(node, inputs[0], outputs[0], threads);
  if (outputs.size() > 1 && !outputs[1].empty()) {
    return max_pool_with_indices(node, inputs[0], outputs[0], outputs[1], threads);
  }
  run_pool<PoolKind::kMax>(node, inputs, outputs, threads);
}

bool check_max_pool(const Graph& graph, const Node& node) {
  const std::int64_t storage_order = node.attributes.get_int("storage_order", 0);
  if (storage_order != 0 && storage_order != 1) return false;
  return check_window_pool(graph, node);
}

void run_average_pool(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                      std::span<Tensor> outputs, int threads) {
  run_pool<PoolKind::kAverage>(node, inputs, outputs, threads);
}

bool check_average_pool(const Graph& graph, const Node& node) {
  const std::int64_t include_pad = node.attributes.get_int("count_include_pad", 0);
  if (include_pad != 0 && include_pad != 1) return false;
  return check_window_pool(graph, node);
}

void run_global_average_pool(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                             std::span<Tensor> outputs, int threads) {
  run_global_pool<PoolKind::kAverage>(node, inputs, outputs, threads);
}

void run_global_max_pool(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                         std::span<Tensor> outputs, int threads) {
  run_global_pool<PoolKind::kMax>(node, inputs, outputs, threads);
}

bool check_global_pool(const Graph& graph, const Node& node) {
  if (node.inputs.size() != 1 || node.outputs.size() != 1) return false;
  if (!is_float32(graph, node.input(0)) || !float32_io(graph, node, 1)) return false;
  return graph.type(node.input(0)).rank() >= 3 &&
         graph.type(node.outputs[0]).rank() == graph.type(node.input(0)).rank();
}

constexpr OpEntry kPoolOps[] = {
    {"MaxPool", run_max_pool, check_max_pool},
    {"AveragePool", run_average_pool, check_average_pool},
    {"GlobalAveragePool", run_global_average_pool, check_global_pool},
    {"GlobalMaxPool", run_global_max_pool, check_global_pool},
};

}  // namespace

std::span<const OpEntry> pool_ops() { return kPoolOps; }

void pool_in_lanes(const Node& node, const Tensor& x, Tensor& y, std::int64_t lanes, int threads) {
  if (x.rank() != 4 || y.rank() != 4 || lanes <= 0 || x.shape()[1] % lanes != 0) {
    throw Error(fmt::format("cannot pool {} in runs of {} channels", x.type().to_string(), lanes),
                {.node = node.name});
  }
  if (node.op_type == "MaxPool") {
    return window_pool_in_lanes<PoolKind::kMax>(node, x, y, lanes, threads);
  }
  if (node.op_type == "AveragePool") {
    return window_pool_in_lanes<PoolKind::kAverage>(node, x, y, lanes, threads);
  }
  if (node.op_type == "GlobalMaxPool") {
    return global_pool_in_lanes<PoolKind::kMax>(x, y, lanes, threads);
  }
  if (node.op_type == "GlobalAveragePool") {
    return global_pool_in_lanes<PoolKind::kAverage>(x, y, lanes, threads);
  }
  throw Error(node.op_type + " is not a pool", {.node = node.name});
}

}  // namespace collage::native
