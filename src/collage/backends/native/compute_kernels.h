// Compute kernels: the internal declarations behind compute_ops().
//
// The compute-heavy native ops (convolution, GEMM, pooling, normalization,
// reductions, resize) each get a run function and a check function with the
// OpRun / OpCheck signatures of op_registry.h; compute_ops.cc lists them in
// the table. The helpers below are shared by several op families: dtype
// checks, axis normalization, the sliding-window geometry of convolution and
// pooling, how many threads a loop of a given size deserves, the padded
// plane copies of direct convolution and pooling, and vectorized row loops.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "collage/ir/graph.h"

namespace collage::native {

// --- Op entries (one run/check pair per op, grouped by file) ---

// ops_conv.cc
void run_conv(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
              std::span<Tensor> outputs, int threads);
bool check_conv(const Graph& graph, const Node& node);

// ops_conv_transpose.cc
void run_conv_transpose(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                        std::span<Tensor> outputs, int threads);
bool check_conv_transpose(const Graph& graph, const Node& node);

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

// ops_resize.cc
void run_resize(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                std::span<Tensor> outputs, int threads);
bool check_resize(const Graph& graph, const Node& node);
void run_upsample(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                  std::span<Tensor> outputs, int threads);
bool check_upsample(const Graph& graph, const Node& node);

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

// One spatial axis of a sliding window (Conv, the pools): output position o
// reads input positions o * stride - pad_begin + t * dilation, t < kernel.
// pad_end is the padding the attributes put after the input (AveragePool
// counts padded cells up to it).
struct WindowAxis {
  std::int64_t input = 1;
  std::int64_t output = 1;
  std::int64_t kernel = 1;
  std::int64_t stride = 1;
  std::int64_t dilation = 1;
  std::int64_t pad_begin = 0;
  std::int64_t pad_end = 0;
};

// Up to three spatial axes, front-padded with trivial axes, so that 1-D,
// 2-D and 3-D windows share one (depth, height, width) loop nest.
using Window3d = std::array<WindowAxis, 3>;

// Whether the node's window attributes (auto_pad, pads, strides, dilations,
// kernel_shape when `kernel_shape_required`) are well formed for
// `spatial_rank` spatial axes and within what the kernels implement.
bool window_attributes_supported(const Node& node, std::size_t spatial_rank,
                                 bool kernel_shape_required);

// The geometry of the node's window, from its attributes and the actual
// input and output spatial sizes; SAME_* padding is derived from the
// output size the graph gives. Throws Error for malformed attributes.
Window3d sliding_window(const Node& node, const Shape& input_spatial, const Shape& output_spatial,
                        const Shape& kernel);

// The kernel_shape attribute, or the given fallback (the weights' spatial
// shape) when it is absent; throws Error when they disagree.
Shape kernel_shape(const Node& node, const Shape& fallback);

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
