// Depthwise convolution of a tensor stored in runs of channels
// (channels-last or oneDNN's blocked layouts, layout_ops.h).
//
// Every lane of a run is its own channel with its own filter, so one vector
// of lanes takes one FMA per tap, with no shuffles: the filters are repacked
// tap-major ([taps][C]) so that one tap's weights for consecutive lanes are
// one load. For the common windows (3x3, 5x5, 7x7 at stride 1 or 2) an output
// row goes in blocks of up to 8 pixels, of sizes as even as they come, whose
// input vectors are loaded once per kernel row with AVX-512 (32 registers)
// and by each FMA with AVX2 (depthwise_row.inc); other windows and border
// pixels go pixel by pixel, taps clipped. Where border pixels are many (small
// images), the input rows of up to eight output rows are first copied with
// zero padding, so that every pixel takes the blocks. Threads take contiguous
// shares of the rows of (image, channel block, output row), channel block
// outermost: split the other way, the shares a thread reads and writes lie in
// the other core's cache after a oneDNN convolution, and a plan of them ran
// 9 % slower (bench/results/2026-12-05n-depthwise-lanes.md).
#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <vector>

#include "collage/backends/native/compute_kernels.h"
#include "collage/backends/native/vector_math.h"
#include "collage/ir/error.h"

namespace collage::native {
namespace {

// One output row of one run of lanes, and where its operands lie.
struct DepthwiseRow {
  // The run's input image [H, W, lanes], at the first lane of the chunk.
  const float* in;
  // The output row [OW, lanes], at the first lane of the chunk.
  float* out;
  // Tap t's weight for the chunk's first lane is weights[t * tap_stride].
  const float* weights;
  std::int64_t tap_stride;
  // Per lane, from the chunk's first.
  const float* bias;
  // Floats from one output pixel to the next, and one input pixel.
  std::int64_t lanes;
  std::int64_t in_step;
  const WindowAxis* ah;
  const WindowAxis* aw;
  std::int64_t oh;
};

// The output columns whose every tap lies inside the input: [first, end).
TapRange inner_columns(const WindowAxis& aw) {
  const std::int64_t first = std::min(aw.output, (aw.pad_begin + aw.stride - 1) / aw.stride);
  const std::int64_t last_start = aw.input - aw.extent();
  std::int64_t end =
      last_start + aw.pad_begin < 0 ? 0 : (last_start + aw.pad_begin) / aw.stride + 1;
  end = std::clamp(end, first, aw.output);
  return {first, end};
}

// The windows whose inner pixels go in blocks, as kernel * 10 + stride
// (3x3, 5x5 and 7x7 at stride 1, 3x3 and 5x5 at stride 2, dilation 1);
// 0 for the others, which go pixel by pixel.
int blocked_window(const WindowAxis& aw) {
  if (aw.dilation != 1) return 0;
  const std::int64_t window = aw.kernel * 10 + aw.stride;
  return window == 31 || window == 32 || window == 51 || window == 52 || window == 71
             ? static_cast<int>(window)
             : 0;
}

// Whether a row's border pixels, which go pixel by pixel, make up more than
// a tenth of it: then its input rows are better copied with zero padding
// (EfficientNet's 5x5 windows at 7x7, four border pixels in seven).
bool mostly_border(const WindowAxis& aw) {
  const TapRange inner = inner_columns(aw);
  return 10 * (aw.output - (inner.end - inner.first)) > aw.output;
}

// The input rows that output rows [oh0, oh1) of one run read, copied into
// `plane` with zero padding on every side, and the axes that describe the
// copy for those rows: every tap of theirs lies inside it.
struct PaddedRows {
  WindowAxis ah;
  WindowAxis aw;
};
PaddedRows pad_rows(const float* in, std::int64_t lanes, const WindowAxis& ah, const WindowAxis& aw,
                    std::int64_t oh0, std::int64_t oh1, std::vector<float>& plane) {
  const std::int64_t first = oh0 * ah.stride - ah.pad_begin;
  const std::int64_t count = (oh1 - 1 - oh0) * ah.stride + ah.extent();
  const std::int64_t width = (aw.output - 1) * aw.stride + aw.extent();
  const std::int64_t copied = std::min(aw.input, width - aw.pad_begin);
  plane.assign(static_cast<std::size_t>(count * width * lanes), 0.0f);
  for (std::int64_t i = 0; i < count; ++i) {
    const std::int64_t ih = first + i;
    if (ih < 0 || ih >= ah.input || copied <= 0) continue;
    std::copy_n(in + ih * aw.input * lanes, copied * lanes,
                plane.data() + (i * width + aw.pad_begin) * lanes);
  }
  PaddedRows padded{ah, aw};
  padded.ah.input = count;
  padded.ah.pad_begin = oh0 * ah.stride;
  padded.ah.pad_end = 0;
  padded.aw.input = width;
  padded.aw.pad_begin = 0;
  padded.aw.pad_end = 0;
  return padded;
}

}  // namespace
}  // namespace collage::native

#define COLLAGE_DEPTHWISE_TARGET COLLAGE_AVX512
namespace collage::native::wide {
#include "collage/backends/native/depthwise_row.inc"

struct Lanes16 {
  using V = __m512;
  static constexpr int kPixels = 8;
  static constexpr bool kKeepInputs = true;
  COLLAGE_AVX512 static V load(const float* p) { return _mm512_loadu_ps(p); }
  COLLAGE_AVX512 static void store(float* p, V v) { _mm512_storeu_ps(p, v); }
  COLLAGE_AVX512 static V zero() { return _mm512_setzero_ps(); }
  COLLAGE_AVX512 static V add(V a, V b) { return _mm512_add_ps(a, b); }
  COLLAGE_AVX512 static V fma(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
};
COLLAGE_AVX512 void depthwise_row16(const DepthwiseRow& r) { depthwise_row<Lanes16>(r); }
}  // namespace collage::native::wide
#undef COLLAGE_DEPTHWISE_TARGET

#define COLLAGE_DEPTHWISE_TARGET
namespace collage::native::narrow {
#include "collage/backends/native/depthwise_row.inc"

struct Lanes8 {
  using V = __m256;
  // Eight accumulators hide the FMA latency on two FMA units.
  static constexpr int kPixels = 8;
  static constexpr bool kKeepInputs = false;
  static V load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, V v) { _mm256_storeu_ps(p, v); }
  static V zero() { return _mm256_setzero_ps(); }
  static V add(V a, V b) { return _mm256_add_ps(a, b); }
  static V fma(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
};
struct Lanes1 {
  using V = float;
  static constexpr int kPixels = 4;
  static constexpr bool kKeepInputs = false;
  static V load(const float* p) { return *p; }
  static void store(float* p, V v) { *p = v; }
  static V zero() { return 0.0f; }
  static V add(V a, V b) { return a + b; }
  static V fma(V a, V b, V c) { return a * b + c; }
};
void depthwise_row8(const DepthwiseRow& r) { depthwise_row<Lanes8>(r); }
void depthwise_row1(const DepthwiseRow& r) { depthwise_row<Lanes1>(r); }
}  // namespace collage::native::narrow
#undef COLLAGE_DEPTHWISE_TARGET

namespace collage::native {

bool depthwise_in_lanes_fits(const Graph& graph, const Node& node) {
  if (node.op_type != "Conv" || !check_conv(graph, node)) return false;
  const TensorType& x = graph.type(node.input(0));
  const TensorType& w = graph.type(node.input(1));
  if (x.rank() != 4 || w.rank() != 4) return false;
  const std::int64_t channels = x.shape[1];
  return node.attributes.get_int("group", 1) == channels && w.shape[0] == channels &&
         w.shape[1] == 1 && graph.type(node.outputs[0]).shape[1] == channels;
}

std::vector<float> depthwise_filters_by_tap(const Tensor& weights) {
  const std::int64_t channels = weights.shape()[0];
  const std::int64_t taps = weights.numel() / std::max<std::int64_t>(1, channels);
  std::vector<float> packed(static_cast<std::size_t>(weights.numel()));
  const float* w = weights.data<float>();
  for (std::int64_t c = 0; c < channels; ++c) {
    for (std::int64_t t = 0; t < taps; ++t) packed[t * channels + c] = w[c * taps + t];
  }
  return packed;
}

void depthwise_conv_in_lanes(const Node& node, std::span<const Tensor> inputs, Tensor& y,
                             std::int64_t lanes, int threads, const ConvOperands* prepared) {
  const ConvShape shape = conv_shape(node, inputs, y);
  if (shape.groups != shape.channels || shape.out_channels != shape.channels ||
      shape.window[0].kernel != 1 || shape.window[0].input != 1) {
    throw Error("a convolution in a channels-last or blocked layout must be 2-D and depthwise",
                {.node = node.name});
  }
  if (y.numel() == 0) return;
  const WindowAxis& ah = shape.window[1];
  const WindowAxis& aw = shape.window[2];
  const std::int64_t channels = shape.channels;
  const std::int64_t taps = ah.kernel * aw.kernel;
  // Filters tap-major (packed here when the kernel could not prepare
  // them), and a bias of zeros where the node has none.
  std::vector<float> packed;
  if (prepared == nullptr || prepared->filters_by_tap.empty()) {
    packed = depthwise_filters_by_tap(inputs[1]);
  }
  const float* filters = packed.empty() ? prepared->filters_by_tap.data() : packed.data();
  const std::span<const ElementwiseFn> epilogue =
      prepared != nullptr ? std::span<const ElementwiseFn>(prepared->epilogue)
                          : std::span<const ElementwiseFn>();
  const Tensor* bias = optional_input(inputs, 2);
  std::vector<float> zeros;
  if (bias == nullptr) zeros.assign(static_cast<std::size_t>(channels), 0.0f);
  const float* bias_data = bias != nullptr ? bias->data<float>() : zeros.data();

  const std::int64_t runs_per_image = channels / lanes;
  const std::int64_t runs = shape.batch * runs_per_image;
  const std::int64_t in_run = ah.input * aw.input * lanes;
  const std::int64_t out_run = ah.output * aw.output * lanes;
  const std::int64_t rows = runs * ah.output;
  const bool wide = has_avx512();
  const bool padded = blocked_window(aw) != 0 && mostly_border(aw);
  // Output rows per padded copy: few enough that a copy of channels-last
  // rows of many channels stays in cache.
  constexpr std::int64_t kRowsPerCopy = 8;
  const float* xd = inputs[0].data<float>();
  float* yd = y.data<float>();
#pragma omp parallel num_threads(loop_threads(rows, aw.output* taps* lanes, threads))
  {
    // Each thread's share is contiguous, as with schedule(static).
    const std::int64_t team = omp_get_num_threads();
    const std::int64_t me = omp_get_thread_num();
    const std::int64_t end = rows * (me + 1) / team;
    thread_local std::vector<float> plane;
    for (std::int64_t row = rows * me / team; row < end;) {
      const std::int64_t run = row / ah.output;
      const std::int64_t oh0 = row % ah.output;
      const std::int64_t oh1 = std::min({ah.output, oh0 + (end - row), oh0 + kRowsPerCopy});
      const std::int64_t first_channel = run % runs_per_image * lanes;
      const float* in = xd + run * in_run;
      const WindowAxis* rows_axis = &ah;
      const WindowAxis* columns_axis = &aw;
      PaddedRows copy;
      if (padded) {
        copy = pad_rows(in, lanes, ah, aw, oh0, oh1, plane);
        in = plane.data();
        rows_axis = &copy.ah;
        columns_axis = &copy.aw;
      }
      for (std::int64_t oh = oh0; oh < oh1; ++oh) {
        // The row, every lane of it, is one run of floats in both layouts.
        float* out_row = yd + run * out_run + oh * aw.output * lanes;
        DepthwiseRow r{.in = in,
                       .out = out_row,
                       .weights = filters + first_channel,
                       .tap_stride = channels,
                       .bias = bias_data + first_channel,
                       .lanes = lanes,
                       .in_step = lanes,
                       .ah = rows_axis,
                       .aw = columns_axis,
                       .oh = oh};
        std::int64_t lane = 0;
        auto advance = [&r](std::int64_t by) {
          r.in += by;
          r.out += by;
          r.weights += by;
          r.bias += by;
        };
        if (wide) {
          for (; lane + 16 <= lanes; lane += 16, advance(16)) wide::depthwise_row16(r);
        }
        for (; lane + 8 <= lanes; lane += 8, advance(8)) narrow::depthwise_row8(r);
        for (; lane < lanes; ++lane, advance(1)) narrow::depthwise_row1(r);
        for (const ElementwiseFn& fn : epilogue) {
          fn.unary(out_row, 1, out_row, aw.output * lanes, fn.params);
        }
      }
      row += oh1 - oh0;
    }
  }
}

}  // namespace collage::native
