// ConvTranspose: the gradient of Conv with respect to its input, used as a
// learned upsampling. 1-D, 2-D and 3-D, groups, strides, dilations, pads,
// output_padding, output_shape and auto_pad.
//
// Computed as GEMM + col2im: for each image and group, the columns
// W_g^T * X_g (one row per output channel and kernel tap, one column per
// input position) are scattered onto the output, each into the position its
// tap reaches. The columns are produced a few input rows at a time so the
// buffer stays bounded whatever the image size.
#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <memory>
#include <vector>

#include "collage/backends/native/compute_kernels.h"
#include "collage/backends/native/sgemm.h"
#include "collage/ir/error.h"

namespace collage::native {
namespace {

// Floats of column buffer one chunk may use (8 MiB).
constexpr std::int64_t kColumnBudget = 2 << 20;

std::int64_t ceil_div(std::int64_t value, std::int64_t divisor) {
  return (value + divisor - 1) / divisor;
}

struct TransposeShape {
  std::int64_t batch, channels, out_channels, groups;
  // Per axis: input and output sizes, kernel, stride, dilation and the
  // padding cut from the start of the full (unpadded) output.
  Window3d window;

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

std::vector<std::int64_t> ints_or(const Node& node, const char* name, std::size_t length,
                                  std::int64_t fallback) {
  std::vector<std::int64_t> values =
      node.attributes.get_ints(name, std::vector<std::int64_t>(length, fallback));
  if (values.size() != length) {
    throw Error(fmt::format("expected {} values, got {}", length, values.size()),
                {.node = node.name, .field = name});
  }
  return values;
}

TransposeShape transpose_shape(const Node& node, const Tensor& x, const Tensor& w,
                               const Tensor& y) {
  const int spatial = x.rank() - 2;
  if (spatial < 1 || spatial > 3 || w.rank() != x.rank() || y.rank() != x.rank()) {
    throw Error(fmt::format("unsupported ranks: input {}, weights {}, output {}",
                            x.type().to_string(), w.type().to_string(), y.type().to_string()),
                {.node = node.name});
  }
  TransposeShape shape;
  shape.batch = x.shape()[0];
  shape.channels = x.shape()[1];
  shape.groups = node.attributes.get_int("group", 1);
  if (shape.groups < 1 || shape.channels % shape.groups != 0 || w.shape()[0] != shape.channels) {
    throw Error(fmt::format("group {} does not fit input {} and weights {}", shape.groups,
                            x.type().to_string(), w.type().to_string()),
                {.node = node.name, .field = "group"});
  }
  shape.out_channels = w.shape()[1] * shape.groups;
  if (y.shape()[0] != shape.batch || y.shape()[1] != shape.out_channels) {
    throw Error("output batch or channels do not match", {.node = node.name});
  }
  const std::size_t rank = static_cast<std::size_t>(spatial);
  const Shape kernel = kernel_shape(node, Shape(w.shape().begin() + 2, w.shape().end()));
  const std::vector<std::int64_t> strides = ints_or(node, "strides", rank, 1);
  const std::vector<std::int64_t> dilations = ints_or(node, "dilations", rank, 1);
  const std::vector<std::int64_t> pads = ints_or(node, "pads", 2 * rank, 0);
  const std::vector<std::int64_t> output_padding = ints_or(node, "output_padding", rank, 0);
  const std::string auto_pad = node.attributes.get_string("auto_pad", "NOTSET");
  const bool has_output_shape = node.attributes.has("output_shape");
  if (has_output_shape) {
    const std::vector<std::int64_t>& output_shape = node.attributes.get_ints("output_shape");
    // output_shape may list the spatial sizes only or the whole shape.
    const Shape wanted =
        output_shape.size() == rank
            ? output_shape
            : Shape(output_shape.end() - std::min(output_shape.size(), rank), output_shape.end());
    if (wanted != Shape(y.shape().begin() + 2, y.shape().end())) {
      throw Error(fmt::format("output_shape does not match the output {}", y.type().to_string()),
                  {.node = node.name, .field = "output_shape"});
    }
  }

  for (std::size_t i = 0; i < rank; ++i) {
    WindowAxis& axis = shape.window[3 - rank + i];
    axis.input = x.shape()[2 + i];
    axis.output = y.shape()[2 + i];
    axis.kernel = kernel[i];
    axis.stride = strides[i];
    axis.dilation = dilations[i];
    if (axis.stride < 1 || axis.dilation < 1) {
      throw Error("strides and dilations must be positive", {.node = node.name});
    }
    // The output before any padding is cut off.
    const std::int64_t full =
        axis.stride * (axis.input - 1) + output_padding[i] + (axis.kernel - 1) * axis.dilation + 1;
    if (has_output_shape || auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      // The padding follows from the requested size; it may be negative,
      // which leaves bias-only rows at the end. C++ division rounds toward
      // zero, as the ONNX reference does.
      const std::int64_t total = full - axis.output;
      axis.pad_begin = auto_pad == "SAME_LOWER" ? total - total / 2 : total / 2;
      continue;
    }
    if (auto_pad == "VALID") {
      axis.pad_begin = 0;
    } else if (auto_pad == "NOTSET") {
      axis.pad_begin = pads[i];
    } else {
      throw Error("unknown auto_pad '" + auto_pad + "'", {.node = node.name, .field = "auto_pad"});
    }
    const std::int64_t pad_end = auto_pad == "VALID" ? 0 : pads[rank + i];
    if (axis.output != full - axis.pad_begin - pad_end) {
      throw Error(fmt::format("output {} does not match the transposed convolution of input {}",
                              y.type().to_string(), x.type().to_string()),
                  {.node = node.name});
    }
  }
  return shape;
}

// Adds the columns of input positions [first_row * in_w, (first_row + rows)
// * in_w) (a "row" is one (d, h) line of the input) to output channel
// `channel` of `output`. `columns` holds kernel_size rows for this channel,
// each `row_stride` floats apart.
void col2im_channel(const TransposeShape& shape, const float* columns, std::int64_t row_stride,
                    std::int64_t first_row, std::int64_t rows, float* output) {
  const WindowAxis& ad = shape.window[0];
  const WindowAxis& ah = shape.window[1];
  const WindowAxis& aw = shape.window[2];
  for (std::int64_t kd = 0; kd < ad.kernel; ++kd) {
    for (std::int64_t kh = 0; kh < ah.kernel; ++kh) {
      for (std::int64_t kw = 0; kw < aw.kernel; ++kw) {
        const float* tap = columns + ((kd * ah.kernel + kh) * aw.kernel + kw) * row_stride;
        const std::int64_t offset = kw * aw.dilation - aw.pad_begin;
        // Input columns iw whose output column iw * stride + offset is inside.
        const std::int64_t lo = offset >= 0 ? 0 : ceil_div(-offset, aw.stride);
        const std::int64_t last = aw.output - 1 - offset;
        const std::int64_t hi = last < 0 ? 0 : std::min(aw.input, last / aw.stride + 1);
        for (std::int64_t r = 0; r < rows; ++r) {
          const std::int64_t row = first_row + r;
          const std::int64_t id = row / ah.input;
          const std::int64_t ih = row % ah.input;
          const std::int64_t od = id * ad.stride - ad.pad_begin + kd * ad.dilation;
          const std::int64_t oh = ih * ah.stride - ah.pad_begin + kh * ah.dilation;
          if (od < 0 || od >= ad.output || oh < 0 || oh >= ah.output) continue;
          const float* src = tap + r * aw.input;
          float* dst = output + (od * ah.output + oh) * aw.output;
          if (aw.stride == 1) {
            float* shifted = dst + offset;
#pragma omp simd
            for (std::int64_t iw = lo; iw < hi; ++iw) shifted[iw] += src[iw];
          } else {
            for (std::int64_t iw = lo; iw < hi; ++iw) dst[iw * aw.stride + offset] += src[iw];
          }
        }
      }
    }
  }
}

}  // namespace

void run_conv_transpose(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                        std::span<Tensor> outputs, int threads) {
  const Tensor& x = inputs[0];
  const Tensor& w = inputs[1];
  const Tensor* bias = optional_input(inputs, 2);
  Tensor& y = outputs[0];
  const TransposeShape shape = transpose_shape(node, x, w, y);
  if (bias != nullptr && bias->numel() != shape.out_channels) {
    throw Error("bias length does not match the output channels", {.node = node.name});
  }

  const std::int64_t cg = shape.group_channels();
  const std::int64_t mg = shape.group_out_channels();
  const std::int64_t taps = shape.kernel_size();
  const std::int64_t in_plane = shape.input_plane();
  const std::int64_t out_plane = shape.output_plane();
  const std::int64_t in_w = shape.window[2].input;
  const std::int64_t in_rows = in_plane / in_w;
  const std::int64_t column_rows = mg * taps;
  const std::int64_t chunk_rows = std::clamp<std::int64_t>(
      kColumnBudget / std::max<std::int64_t>(1, column_rows * in_w), 1, in_rows);
  // Every element is written by the GEMM before it is read: no need to zero it.
  const std::unique_ptr<float[]> columns(
      new float[static_cast<std::size_t>(column_rows * chunk_rows * in_w)]);

  const float* xd = x.data<float>();
  const float* wd = w.data<float>();
  float* yd = y.data<float>();
  const std::int64_t planes = shape.batch * shape.out_channels;
  const int fill_threads = loop_threads(planes, out_plane, threads);
#pragma omp parallel for num_threads(fill_threads) schedule(static)
  for (std::int64_t plane = 0; plane < planes; ++plane) {
    const float value = bias != nullptr ? bias->data<float>()[plane % shape.out_channels] : 0.0f;
    std::fill(yd + plane * out_plane, yd + (plane + 1) * out_plane, value);
  }

  for (std::int64_t n = 0; n < shape.batch; ++n) {
    for (std::int64_t g = 0; g < shape.groups; ++g) {
      const float* image = xd + (n * shape.channels + g * cg) * in_plane;
      // W_g is [cg, mg * taps]; its transpose is the GEMM's left operand.
      const SgemmMatrix weights{wd + g * cg * column_rows, column_rows, true};
      float* out_group = yd + (n * shape.out_channels + g * mg) * out_plane;
      for (std::int64_t row0 = 0; row0 < in_rows; row0 += chunk_rows) {
        const std::int64_t rows = std::min(chunk_rows, in_rows - row0);
        const std::int64_t width = rows * in_w;
        sgemm(column_rows, width, cg, weights, SgemmMatrix{image + row0 * in_w, in_plane, false},
              SgemmOutput{columns.get(), width}, threads);
        const int scatter_threads = loop_threads(mg, taps * width, threads);
#pragma omp parallel for num_threads(scatter_threads) schedule(static)
        for (std::int64_t m = 0; m < mg; ++m) {
          col2im_channel(shape, columns.get() + m * taps * width, width, row0, rows,
                         out_group + m * out_plane);
        }
      }
    }
  }
}

bool check_conv_transpose(const Graph& graph, const Node& node) {
  if (node.inputs.size() < 2 || node.outputs.size() != 1) return false;
  if (!is_float32(graph, node.input(0)) || !is_float32(graph, node.input(1))) return false;
  if (!float32_io(graph, node, 3)) return false;
  const int rank = graph.type(node.input(0)).rank();
  if (rank < 3 || rank > 5 || graph.type(node.input(1)).rank() != rank) return false;
  if (graph.type(node.outputs[0]).rank() != rank) return false;
  const std::size_t spatial = static_cast<std::size_t>(rank - 2);
  const std::int64_t groups = node.attributes.get_int("group", 1);
  const Shape& x = graph.type(node.input(0)).shape;
  const Shape& w = graph.type(node.input(1)).shape;
  if (groups < 1 || x[1] % groups != 0 || w[0] != x[1]) return false;
  if (node.attributes.has("kernel_shape") &&
      node.attributes.get_ints("kernel_shape") != Shape(w.begin() + 2, w.end())) {
    return false;
  }
  if (node.attributes.has("output_padding") &&
      node.attributes.get_ints("output_padding").size() != spatial) {
    return false;
  }
  return window_attributes_supported(node, spatial, false);
}

}  // namespace collage::native
