#include "collage/backends/openblas/im2col_conv.h"

#include <omp.h>

#include <algorithm>
#include <cstring>

#include "collage/backends/openblas/blas.h"
#include "collage/ir/error.h"
#include "collage/ir/window.h"

namespace collage::openblas {
namespace {

// Patch matrices smaller than this are built on one thread.
constexpr std::int64_t kParallelIm2col = 1 << 16;

bool is_float(const Graph& graph, ValueId id) {
  return id != kNoValue && graph.type(id).dtype == DType::kFloat32;
}

}  // namespace

bool ConvGeometry::pointwise() const {
  return kernel_h == 1 && kernel_w == 1 && stride_h == 1 && stride_w == 1 && pad_top == 0 &&
         pad_left == 0 && out_h == height && out_w == width;
}

Result<ConvGeometry> analyze_conv(const Graph& graph, const Node& node) {
  if (node.inputs.size() < 2 || node.inputs.size() > 3 || node.outputs.size() != 1) {
    return Failure{"Conv must have two or three inputs and one output"};
  }
  if (!is_float(graph, node.input(0)) || !is_float(graph, node.input(1)) ||
      !is_float(graph, node.outputs[0])) {
    return Failure{"Conv is supported for float32 only"};
  }
  const Shape& x = graph.type(node.input(0)).shape;
  const Shape& w = graph.type(node.input(1)).shape;
  if ((x.size() != 3 && x.size() != 4) || w.size() != x.size()) {
    return Failure{"Conv is supported in 1-D and 2-D only"};
  }
  const std::size_t spatial = x.size() - 2;

  ConvGeometry g;
  g.batch = x[0];
  g.channels = x[1];
  g.out_channels = w[0];
  try {
    g.groups = node.attributes.get_int("group", 1);
  } catch (const Error& error) {
    return Failure{std::string("Conv: ") + error.what()};
  }
  if (g.groups < 1 || g.channels % g.groups != 0 || g.out_channels % g.groups != 0 ||
      w[1] != g.channels / g.groups) {
    return Failure{"Conv group does not divide the channels of " + shape_to_string(x) + " and " +
                   shape_to_string(w)};
  }
  if (node.input(2) != kNoValue) {
    if (!is_float(graph, node.input(2)) ||
        graph.type(node.input(2)).shape != Shape{g.out_channels}) {
      return Failure{"Conv bias must be float32 of shape [M]"};
    }
  }

  Result<Window> window =
      forward_window(node, Shape(x.begin() + 2, x.end()), Shape(w.begin() + 2, w.end()));
  if (!window) return Failure{window.error()};
  for (const WindowAxis& axis : window->axes) {
    if (axis.output < 1) return Failure{"Conv kernel is larger than the padded input"};
  }
  // A 1-D convolution is a 2-D one whose height axis is trivial.
  const WindowAxis height = spatial == 2 ? window->axes.front() : WindowAxis{};
  const WindowAxis& width = window->axes.back();
  g.height = height.input;
  g.kernel_h = height.kernel;
  g.stride_h = height.stride;
  g.dilation_h = height.dilation;
  g.pad_top = height.pad_begin;
  g.out_h = height.output;
  g.width = width.input;
  g.kernel_w = width.kernel;
  g.stride_w = width.stride;
  g.dilation_w = width.dilation;
  g.pad_left = width.pad_begin;
  g.out_w = width.output;
  g.output = {g.batch, g.out_channels};
  const Shape output_spatial = window->output_shape();
  g.output.insert(g.output.end(), output_spatial.begin(), output_spatial.end());
  if (g.output != graph.type(node.outputs[0]).shape) {
    return Failure{"Conv output shape " + shape_to_string(graph.type(node.outputs[0]).shape) +
                   " differs from the computed " + shape_to_string(g.output)};
  }
  const std::int64_t rows = g.patch_rows();
  if (!fits_blas_int(rows * g.pixels()) || !fits_blas_int(g.height * g.width * g.channels)) {
    return Failure{"Conv sizes exceed OpenBLAS's 32-bit indices"};
  }
  return g;
}

void im2col(const ConvGeometry& g, const float* input, float* patches, int threads) {
  const std::int64_t kernel = g.kernel_h * g.kernel_w;
  const std::int64_t rows = g.patch_rows();
  const std::int64_t pixels = g.pixels();
  const bool parallel = threads > 1 && rows * pixels >= kParallelIm2col;

#pragma omp parallel for num_threads(threads) schedule(static) if (parallel)
  for (std::int64_t row = 0; row < rows; ++row) {
    const std::int64_t c = row / kernel;
    const std::int64_t ki = row % kernel / g.kernel_w;
    const std::int64_t kj = row % g.kernel_w;
    const float* channel = input + c * g.height * g.width;
    float* dst = patches + row * pixels;
    // Output columns whose input column lies inside the image, for this kj.
    const std::int64_t shift = kj * g.dilation_w - g.pad_left;
    const std::int64_t lo =
        shift >= 0 ? 0 : std::min(g.out_w, (-shift + g.stride_w - 1) / g.stride_w);
    const std::int64_t last = g.width - 1 - shift;
    const std::int64_t hi = last < 0 ? lo : std::max(lo, std::min(g.out_w, last / g.stride_w + 1));
    for (std::int64_t oy = 0; oy < g.out_h; ++oy, dst += g.out_w) {
      const std::int64_t iy = oy * g.stride_h - g.pad_top + ki * g.dilation_h;
      if (iy < 0 || iy >= g.height) {
        std::fill(dst, dst + g.out_w, 0.0f);
        continue;
      }
      const float* src = channel + iy * g.width;
      std::fill(dst, dst + lo, 0.0f);
      if (g.stride_w == 1) {
        std::memcpy(dst + lo, src + lo + shift, static_cast<std::size_t>(hi - lo) * sizeof(float));
      } else {
        for (std::int64_t ox = lo; ox < hi; ++ox) dst[ox] = src[ox * g.stride_w + shift];
      }
      std::fill(dst + hi, dst + g.out_w, 0.0f);
    }
  }
}

Im2colConv::Im2colConv(ConvGeometry geometry, Operand input, Operand weights, int threads)
    : geometry_(std::move(geometry)),
      input_(std::move(input)),
      weights_(std::move(weights)),
      threads_(threads) {
  const std::int64_t tasks = geometry_.batch * geometry_.groups;
  task_parallel_ = threads_ > 1 && tasks >= threads_;
  if (geometry_.pointwise()) return;
  const std::int64_t slots = task_parallel_ ? threads_ : 1;
  workspace_ = Tensor::allocate(
      TensorType{DType::kFloat32, {slots, geometry_.patch_rows(), geometry_.pixels()}});
}

void Im2colConv::run_task(std::int64_t task, const float* x, const float* w, float* out,
                          float* patches, int threads) const {
  const ConvGeometry& g = geometry_;
  const std::int64_t image = task / g.groups;
  const std::int64_t group = task % g.groups;
  const std::int64_t group_channels = g.channels / g.groups;
  const std::int64_t group_outputs = g.out_channels / g.groups;
  const std::int64_t rows = g.patch_rows();
  const std::int64_t pixels = g.pixels();
  const float* image_group = x + (image * g.channels + group * group_channels) * g.height * g.width;
  const float* weights = w + group * group_outputs * rows;
  float* result = out + (image * g.out_channels + group * group_outputs) * pixels;

  const float* matrix = image_group;
  if (!g.pointwise()) {
    im2col(g, image_group, patches, threads);
    matrix = patches;
  }
  if (group_outputs == 1) {
    sgemv(true, rows, pixels, 1.0f, matrix, pixels, weights, 1, 0.0f, result, 1);
    return;
  }
  sgemm(false, false, group_outputs, pixels, rows, 1.0f, weights, rows, matrix, pixels, 0.0f,
        result, pixels);
}

void Im2colConv::run(std::span<const Tensor> inputs, float* out) {
  const ConvGeometry& g = geometry_;
  const std::int64_t tasks = g.batch * g.groups;
  const std::int64_t pixels = g.pixels();
  if (tasks == 0 || pixels == 0 || g.out_channels == 0) return;
  if (g.patch_rows() == 0) {
    std::memset(out, 0, static_cast<std::size_t>(shape_numel(g.output)) * sizeof(float));
    return;
  }
  const float* x = input_.data(inputs);
  const float* w = weights_.data(inputs);
  float* workspace = workspace_.empty() ? nullptr : workspace_.data<float>();
  const std::int64_t slot = g.patch_rows() * pixels;
  if (task_parallel_) {
#pragma omp parallel for num_threads(threads_) schedule(static)
    for (std::int64_t task = 0; task < tasks; ++task) {
      float* patches = workspace == nullptr ? nullptr : workspace + omp_get_thread_num() * slot;
      run_task(task, x, w, out, patches, 1);
    }
    return;
  }
  for (std::int64_t task = 0; task < tasks; ++task) run_task(task, x, w, out, workspace, threads_);
}

}  // namespace collage::openblas
