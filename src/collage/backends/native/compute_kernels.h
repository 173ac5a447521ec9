// Compute kernels: the internal declarations behind compute_ops().
//
// The compute-heavy native ops (convolution, GEMM, pooling, normalization,
// reductions, resize, the recurrent layers, quantization): each file lists its
// ops in its own table of OpEntry rows (op_registry.h), and compute_ops()
// assembles them, as tensor_ops() does the tensor ops'. The helpers below are shared by several op
// families: dtype checks, axis normalization, the three-axis form of a convolution's or pool's
// window (resolved by ir/window.h), how many threads a loop of a given size deserves, the padded
// plane copies of direct convolution and pooling, and vectorized row loops.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "collage/backends/native/elementwise_math.h"
#include "collage/backends/native/op_registry.h"
#include "collage/ir/graph.h"
#include "collage/ir/window.h"

namespace collage::native {

// --- Op tables: each file's ops (op_registry.h), assembled by compute_ops() ---

std::span<const OpEntry> conv_ops();            // ops_conv.cc
std::span<const OpEntry> conv_transpose_ops();  // ops_conv_transpose.cc
std::span<const OpEntry> gemm_ops();            // ops_gemm.cc
std::span<const OpEntry> pool_ops();            // ops_pool.cc
std::span<const OpEntry> norm_ops();            // ops_norm.cc
std::span<const OpEntry> reduce_ops();          // ops_reduce.cc
std::span<const OpEntry> resize_ops();          // ops_resize.cc
std::span<const OpEntry> grid_sample_ops();     // ops_grid_sample.cc
std::span<const OpEntry> roi_align_ops();       // ops_roi_align.cc
std::span<const OpEntry> recurrent_ops();       // ops_recurrent.cc
std::span<const OpEntry> quantize_ops();        // ops_quantize.cc

std::span<const OpEntry> qlinear_ops();  // ops_qlinear.cc

// Conv and ConvTranspose (ops_conv.cc): whether conv_shape() takes the node.
bool check_conv(const Graph& graph, const Node& node);
// Whether a convolution node's data and weights (given by value, so that
// the quantized convolutions can name theirs) fit its attributes and output:
// rank 3 to 5, groups, and a well-formed window.
bool conv_geometry_fits(const Graph& graph, const Node& node, ValueId data, ValueId weights);

// --- Shared helpers (compute_ops.cc) ---

// Whether `value` is present and of type float32.
bool is_float32(const Graph& graph, ValueId value);
// Whether the node's first `float_inputs` inputs (those that are present)
// and all its present outputs are float32. Required inputs are checked by
// the op's own check.
bool float32_io(const Graph& graph, const Node& node, std::size_t float_inputs);
// The optional input `i`, or null when the node leaves it out.
const Tensor* optional_input(std::span<const Tensor> inputs, std::size_t i);

// `axis` in [-rank, rank) as an index in [0, rank); throws an Error naming
// the node and `field` otherwise.
int normalize_axis(std::int64_t axis, int rank, const Node& node, std::string_view field);

// Up to three spatial axes of a window (ir/window.h), front-padded with
// trivial axes, so that 1-D, 2-D and 3-D windows share one (depth, height,
// width) loop nest.
using Window3d = std::array<WindowAxis, 3>;

// `window`, of 1 to 3 axes, as a Window3d.
Window3d window_3d(const Window& window);

// The sizes of a Conv or ConvTranspose: images, channels on both sides,
// groups, and the window over the spatial axes (for ConvTranspose, the
// window's input is the node's input and its output the node's output).
struct ConvShape {
  std::int64_t batch = 0;
  std::int64_t channels = 0;
  std::int64_t out_channels = 0;
  std::int64_t groups = 1;
  Window3d window{};

  std::int64_t group_channels() const { return channels / groups; }
  std::int64_t group_out_channels() const { return out_channels / groups; }
  std::int64_t input_plane() const { return window[0].input * window[1].input * window[2].input; }
  std::int64_t output_plane() const {
    return window[0].output * window[1].output * window[2].output;
  }
  std::int64_t kernel_size() const {
    return window[0].kernel * window[1].kernel * window[2].kernel;
  }
};

// Whether `node` is a ConvTranspose or collage's QLinearConvTranspose, whose
// weights are [C, M / group, k...].
bool is_transposed_convolution(const Node& node);

// The sizes of a Conv or ConvTranspose node (by its op_type) run on
// `inputs` (data, weights, optional bias) and output `y`. Throws Error when
// they do not fit together or with the node's attributes.
ConvShape conv_shape(const Node& node, std::span<const Tensor> inputs, const Tensor& y);

// The int32 sums of a transposed convolution (ops_conv_transpose.cc), of x
// and w (weights [C, M/g, k...]) given less their zero points: y[n, m, o] =
// bias[m] (null: 0) + the sum, over the input positions i and taps t that
// reach o, of x[i] * w[t]. GEMM of each group's weights by its input into
// columns, scattered onto the output (col2im), as the float op is. int8
// weights with zero points of 0 are read as they are.
void integer_conv_transpose(const ConvShape& shape, const std::int16_t* x, const std::int16_t* w,
                            const Tensor* bias, std::int32_t* y, int threads);
void integer_conv_transpose(const ConvShape& shape, const std::int16_t* x, const std::int8_t* w,
                            const Tensor* bias, std::int32_t* y, int threads);

// Softmax of float32 `x` into `y` along `node`'s axis (ops_norm.cc); with
// `coerce` (before opset 13) over the matrix the axis splits the shape into.
void softmax(const Node& node, const Tensor& x, Tensor& y, bool coerce, int threads);

// MaxPool, AveragePool (2-D, without Indices), GlobalMaxPool or
// GlobalAveragePool `node` of a 4-D float32 tensor stored as [groups, H, W,
// lanes] (channels-last: lanes = C; blocked: lanes = the block), into `y`
// stored likewise (a global pool's [N, C, 1, 1] is the same in every layout).
void pool_in_lanes(const Node& node, const Tensor& x, Tensor& y, std::int64_t lanes, int threads);

// GroupNormalization (scale and bias per channel or per group) `node` of a 4-D
// float32 tensor stored as [N * C / lanes, H, W, lanes] (channels-last:
// lanes = C; blocked: lanes = the block), into `y` stored likewise; then
// `epilogue`'s unary ops in order (a fused activation, a Swish), applied in
// the same pass while each block of y is in cache.
void group_norm_in_lanes(const Node& node, std::span<const Tensor> inputs, Tensor& y,
                         std::int64_t lanes, int threads,
                         std::span<const ElementwiseFn> epilogue = {});

// Whether resize_in_lanes runs `node`: a float32 4-D Resize of static
// shapes that keeps the batch and the channels (so every mode the native
// Resize takes acts on H and W alone).
bool resize_in_lanes_fits(const Graph& graph, const Node& node);

// A Resize `node` (resize_in_lanes_fits) of a tensor stored as [N * C /
// lanes, H, W, lanes] (channels-last: lanes = C; blocked: lanes = the
// block), into `y` stored likewise; its other inputs (roi, scales, sizes)
// are plain.
void resize_in_lanes(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                     Tensor& y, std::int64_t lanes, int threads);

// The taps of a window axis that meet the input at output position `o`:
// [first, end).
struct TapRange {
  std::int64_t first;
  std::int64_t end;
};
inline TapRange taps_inside(const WindowAxis& axis, std::int64_t o) {
  const std::int64_t start = o * axis.stride - axis.pad_begin;
  std::int64_t first = 0;
  if (start < 0) first = (-start + axis.dilation - 1) / axis.dilation;
  std::int64_t end = axis.kernel;
  const std::int64_t last_position = start + (axis.kernel - 1) * axis.dilation;
  if (last_position >= axis.input) end = (axis.input - 1 - start) / axis.dilation + 1;
  return {first, std::max(first, std::min(end, axis.kernel))};
}

// What a compiled kernel prepares once for a Conv: for a depthwise one it
// runs in a layout, the filters tap-major (depthwise_filters_by_tap); for
// one on Winograd, the weights transformed (winograd_weights); each empty
// when the weights are no constant, so each run prepares them. And the
// unary ops applied in order to its output (a fused activation; for a
// depthwise one, to each output row while it is in cache). A
// GroupNormalization in a layout takes the epilogue alone.
struct ConvOperands {
  std::vector<float> filters_by_tap;
  std::vector<float> winograd;
  // A plain Conv run by taps (conv_taps.h): weights_by_tap.
  std::vector<float> by_tap;
  std::vector<ElementwiseFn> epilogue;
};

// Runs a Conv as its op entry does, given its weights transformed for the
// strategy its shapes take (Winograd: `prepared->winograd`, by taps:
// `prepared->by_tap`; null or empty: each call transforms them).
void run_conv_prepared(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                       std::span<Tensor> outputs, int threads, const ConvOperands* prepared);

// Depthwise filters [C, 1, kh, kw] as [kh * kw][C], so that one tap's
// weights for consecutive channels are one vector load.
std::vector<float> depthwise_filters_by_tap(const Tensor& weights);

// A depthwise Conv (2-D, one output channel per input channel, optional
// bias; depthwise_in_lanes_fits) of a float32 tensor stored as [N * C /
// lanes, H, W, lanes] (channels-last: lanes = C; blocked: lanes = the
// block), into `y` stored likewise. The weights and bias are plain;
// `prepared` (may be null) gives their repacked form and the epilogue.
void depthwise_conv_in_lanes(const Node& node, std::span<const Tensor> inputs, Tensor& y,
                             std::int64_t lanes, int threads,
                             const ConvOperands* prepared = nullptr);
// Whether depthwise_conv_in_lanes runs `node`.
bool depthwise_in_lanes_fits(const Graph& graph, const Node& node);

// The threads a loop of `units` independent pieces of about `work_per_unit`
// elementary operations should use: 1 for small loops, at most `threads`.
int loop_threads(std::int64_t units, std::int64_t work_per_unit, int threads);

// A padded copy of one 2-D plane for a sliding window (depthwise Conv, the
// pools), split into column phases modulo the width stride. Every tap of a
// window then reads a contiguous run of the copy for consecutive output
// columns, whatever the stride, and the padding needs no bounds checks: it
// holds a fill value (0 for sums, -inf for maxima). One per thread; load()
// reuses the buffer for every plane.
class PhasePlane {
 public:
  PhasePlane(const WindowAxis& height, const WindowAxis& width);
  // Copies `plane` (height.input x width.input floats) in, padding with `fill`.
  void load(const float* plane, float fill);
  // The input values tap (ky, kx) meets at output row `oy`: element ox of
  // the result is the value at output column ox.
  const float* tap(std::int64_t oy, std::int64_t ky, std::int64_t kx) const {
    const std::int64_t row = oy * h_.stride + ky * h_.dilation;
    return data_.data() + row * row_size_ + tap_offset_[static_cast<std::size_t>(kx)];
  }

 private:
  WindowAxis h_, w_;
  std::int64_t rows_ = 0;         // padded rows any window reads
  std::int64_t phase_width_ = 0;  // columns per phase
  std::int64_t row_size_ = 0;     // stride * phase_width_
  // Per kernel column kx: where output column 0 of that tap sits in a row.
  std::vector<std::int64_t> tap_offset_;
  std::vector<float> data_;  // [rows_][stride][phase_width_]
  // Stride 2: one input row split into its even and odd columns.
  std::vector<float> even_, odd_;
};

// --- Row primitives (AVX2): the inner loops of pooling, normalization and
// reductions, written with intrinsics because GCC does not vectorize float
// max/min reductions without -ffast-math.

float row_max(const float* x, std::int64_t count);
float row_sum(const float* x, std::int64_t count);
// dst[i] = max(dst[i], src[i]).
void max_into(float* dst, const float* src, std::int64_t count);
// dst[i] += src[i].
void add_into(float* dst, const float* src, std::int64_t count);
// sum(exp(x[i] - shift)), with a vectorized exp of about 2 ulp (ops_norm.cc).
float sum_exp_shifted(const float* x, float shift, std::int64_t count);

}  // namespace collage::native
