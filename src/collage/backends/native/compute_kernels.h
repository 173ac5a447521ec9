// Compute kernels: the internal declarations behind compute_ops().
//
// The compute-heavy native ops (convolution, GEMM, pooling, normalization,
// reductions, resize, the recurrent layers, quantization) each get a run function and a check
// function with the OpRun / OpCheck signatures of op_registry.h; compute_ops.cc lists them in the
// table. The helpers below are shared by several op families: dtype checks, axis normalization, the
// three-axis form of a convolution's or pool's window (resolved by ir/window.h), how many threads a
// loop of a given size deserves, the padded plane copies of direct convolution and pooling, and
// vectorized row loops.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "collage/ir/graph.h"
#include "collage/ir/window.h"

namespace collage::native {

// --- Op entries (one run/check pair per op, grouped by file) ---

// ops_conv.cc
void run_conv(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
              std::span<Tensor> outputs, int threads);
// Conv and ConvTranspose: whether conv_shape() takes the node.
bool check_conv(const Graph& graph, const Node& node);

// ops_conv_transpose.cc
void run_conv_transpose(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                        std::span<Tensor> outputs, int threads);

// ops_gemm.cc
void run_gemm(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
              std::span<Tensor> outputs, int threads);
bool check_gemm(const Graph& graph, const Node& node);
void run_matmul(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                std::span<Tensor> outputs, int threads);
bool check_matmul(const Graph& graph, const Node& node);

// ops_pool.cc
void run_max_pool(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                  std::span<Tensor> outputs, int threads);
bool check_max_pool(const Graph& graph, const Node& node);
void run_average_pool(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                      std::span<Tensor> outputs, int threads);
bool check_average_pool(const Graph& graph, const Node& node);
void run_global_average_pool(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                             std::span<Tensor> outputs, int threads);
void run_global_max_pool(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                         std::span<Tensor> outputs, int threads);
bool check_global_pool(const Graph& graph, const Node& node);

// ops_norm.cc
void run_batch_normalization(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                             std::span<Tensor> outputs, int threads);
bool check_batch_normalization(const Graph& graph, const Node& node);
void run_layer_normalization(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                             std::span<Tensor> outputs, int threads);
bool check_layer_normalization(const Graph& graph, const Node& node);
void run_instance_normalization(const Graph& graph, const Node& node,
                                std::span<const Tensor> inputs, std::span<Tensor> outputs,
                                int threads);
bool check_instance_normalization(const Graph& graph, const Node& node);
void run_lrn(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
             std::span<Tensor> outputs, int threads);
bool check_lrn(const Graph& graph, const Node& node);
void run_softmax(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                 std::span<Tensor> outputs, int threads);
void run_log_softmax(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                     std::span<Tensor> outputs, int threads);
bool check_softmax(const Graph& graph, const Node& node);

// ops_reduce.cc
void run_reduce_sum(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                    std::span<Tensor> outputs, int threads);
void run_reduce_mean(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                     std::span<Tensor> outputs, int threads);
void run_reduce_max(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                    std::span<Tensor> outputs, int threads);
void run_reduce_min(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                    std::span<Tensor> outputs, int threads);
void run_reduce_prod(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                     std::span<Tensor> outputs, int threads);
void run_reduce_sum_square(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                           std::span<Tensor> outputs, int threads);
void run_reduce_l1(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                   std::span<Tensor> outputs, int threads);
void run_reduce_l2(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                   std::span<Tensor> outputs, int threads);
void run_reduce_log_sum(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                        std::span<Tensor> outputs, int threads);
void run_reduce_log_sum_exp(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                            std::span<Tensor> outputs, int threads);
bool check_reduce(const Graph& graph, const Node& node);
void run_arg_max(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                 std::span<Tensor> outputs, int threads);
void run_arg_min(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                 std::span<Tensor> outputs, int threads);
bool check_arg_reduce(const Graph& graph, const Node& node);
void run_hardmax(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                 std::span<Tensor> outputs, int threads);
bool check_hardmax(const Graph& graph, const Node& node);
void run_top_k(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
               std::span<Tensor> outputs, int threads);
bool check_top_k(const Graph& graph, const Node& node);

// ops_recurrent.cc: RNN, GRU and LSTM
void run_recurrent(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                   std::span<Tensor> outputs, int threads);
bool check_recurrent(const Graph& graph, const Node& node);
// ops_quantize.cc
void run_quantize_linear(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                         std::span<Tensor> outputs, int threads);
bool check_quantize_linear(const Graph& graph, const Node& node);
void run_dequantize_linear(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                           std::span<Tensor> outputs, int threads);
bool check_dequantize_linear(const Graph& graph, const Node& node);
void run_dynamic_quantize_linear(const Graph& graph, const Node& node,
                                 std::span<const Tensor> inputs, std::span<Tensor> outputs,
                                 int threads);
bool check_dynamic_quantize_linear(const Graph& graph, const Node& node);
void run_matmul_integer(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                        std::span<Tensor> outputs, int threads);
bool check_matmul_integer(const Graph& graph, const Node& node);
void run_qlinear_matmul(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                        std::span<Tensor> outputs, int threads);
bool check_qlinear_matmul(const Graph& graph, const Node& node);
// ops_resize.cc
void run_resize(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                std::span<Tensor> outputs, int threads);
bool check_resize(const Graph& graph, const Node& node);
void run_upsample(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                  std::span<Tensor> outputs, int threads);
bool check_upsample(const Graph& graph, const Node& node);
// ops_grid_sample.cc
void run_grid_sample(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                     std::span<Tensor> outputs, int threads);
bool check_grid_sample(const Graph& graph, const Node& node);

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

// The sizes of a Conv or ConvTranspose node (by its op_type) run on
// `inputs` (data, weights, optional bias) and output `y`. Throws Error when
// they do not fit together or with the node's attributes.
ConvShape conv_shape(const Node& node, std::span<const Tensor> inputs, const Tensor& y);

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
