// ConvTranspose: the gradient of Conv with respect to its input, used as a
// learned upsampling. 1-D, 2-D and 3-D, groups, strides, dilations, pads,
// output_padding, output_shape and auto_pad. Also the int32 sums of the
// quantized one (QLinearConvTranspose), the same way.
//
// Computed as GEMM + col2im: for each image and group, the columns
// W_g^T * X_g (one row per output channel and kernel tap, one column per
// input position) are scattered onto the output, each into the position its
// tap reaches. The columns are produced a few input rows at a time so the
// buffer stays bounded whatever the image size.

#include <algorithm>
#include <cassert>
#include <memory>
#include <vector>

#include "collage/backends/native/compute_kernels.h"
#include "collage/backends/native/sgemm.h"

namespace collage::native {
namespace {

// Floats of column buffer one chunk may use (8 MiB).
constexpr std::int64_t kColumnBudget = 2 << 20;
// Input positions the integer GEMM accumulates together.
constexpr std::int64_t kPositionBlock = 8;

std::int64_t ceil_div(std::int64_t value, std::int64_t divisor) {
  return (value + divisor - 1) / divisor;
}

// Adds the columns of input positions [first_row * in_w, (first_row + rows)
// * in_w) (a "row" is one (d, h) line of the input) to output channel
// `channel` of `output`. `columns` holds kernel_size rows for this channel,
// each `row_stride` values apart. T is float, or int32 for the integer sums.
template <typename T>
void col2im_channel(const ConvShape& shape, const T* columns, std::int64_t row_stride,
                    std::int64_t first_row, std::int64_t rows, T* output) {
  const WindowAxis& ad = shape.window[0];
  const WindowAxis& ah = shape.window[1];
  const WindowAxis& aw = shape.window[2];
  for (std::int64_t kd = 0; kd < ad.kernel; ++kd) {
    for (std::int64_t kh = 0; kh < ah.kernel; ++kh) {
      for (std::int64_t kw = 0; kw < aw.kernel; ++kw) {
        const T* tap = columns + ((kd * ah.kernel + kh) * aw.kernel + kw) * row_stride;
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
          const T* src = tap + r * aw.input;
          T* dst = output + (od * ah.output + oh) * aw.output;
          if (aw.stride == 1) {
            T* shifted = dst + offset;
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

// The sizes a transposed convolution is computed by: channels per group in
// and out, taps, planes, the input's width and lines (a line is one (d, h)
// row of the input), and the columns of one group (taps times output
// channels of a group rows), computed `chunk_rows` input lines at a time so
// that the buffer stays bounded whatever the image size.
struct TransposeSizes {
  std::int64_t cg, mg, taps, in_plane, out_plane, in_w, in_rows, column_rows, chunk_rows;
};

TransposeSizes transpose_sizes(const ConvShape& shape) {
  const std::int64_t column_rows = shape.group_out_channels() * shape.kernel_size();
  const std::int64_t in_w = shape.window[2].input;
  const std::int64_t in_rows = shape.input_plane() / in_w;
  return TransposeSizes{
      .cg = shape.group_channels(),
      .mg = shape.group_out_channels(),
      .taps = shape.kernel_size(),
      .in_plane = shape.input_plane(),
      .out_plane = shape.output_plane(),
      .in_w = in_w,
      .in_rows = in_rows,
      .column_rows = column_rows,
      .chunk_rows = std::clamp<std::int64_t>(
          kColumnBudget / std::max<std::int64_t>(1, column_rows * in_w), 1, in_rows)};
}

void run_conv_transpose(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                        std::span<Tensor> outputs, int threads) {
  Tensor& y = outputs[0];
  const ConvShape shape = conv_shape(node, inputs, y);
  const Tensor* bias = optional_input(inputs, 2);

  const TransposeSizes sizes = transpose_sizes(shape);
  // Every element is written by the GEMM before it is read: no need to zero it.
  const std::unique_ptr<float[]> columns(
      new float[static_cast<std::size_t>(sizes.column_rows * sizes.chunk_rows * sizes.in_w)]);

  const float* xd = inputs[0].data<float>();
  const float* wd = inputs[1].data<float>();
  float* yd = y.data<float>();
  const std::int64_t planes = shape.batch * shape.out_channels;
  const int fill_threads = loop_threads(planes, sizes.out_plane, threads);
#pragma omp parallel for num_threads(fill_threads) schedule(static)
  for (std::int64_t plane = 0; plane < planes; ++plane) {
    const float value = bias != nullptr ? bias->data<float>()[plane % shape.out_channels] : 0.0f;
    std::fill(yd + plane * sizes.out_plane, yd + (plane + 1) * sizes.out_plane, value);
  }

  for (std::int64_t n = 0; n < shape.batch; ++n) {
    for (std::int64_t g = 0; g < shape.groups; ++g) {
      const float* image = xd + (n * shape.channels + g * sizes.cg) * sizes.in_plane;
      // W_g is [cg, mg * taps]; its transpose is the GEMM's left operand.
      const SgemmMatrix weights{wd + g * sizes.cg * sizes.column_rows, sizes.column_rows, true};
      float* out_group = yd + (n * shape.out_channels + g * sizes.mg) * sizes.out_plane;
      for (std::int64_t row0 = 0; row0 < sizes.in_rows; row0 += sizes.chunk_rows) {
        const std::int64_t rows = std::min(sizes.chunk_rows, sizes.in_rows - row0);
        const std::int64_t width = rows * sizes.in_w;
        sgemm(sizes.column_rows, width, sizes.cg, weights,
              SgemmMatrix{image + row0 * sizes.in_w, sizes.in_plane, false},
              SgemmOutput{columns.get(), width}, threads);
        const int scatter_threads = loop_threads(sizes.mg, sizes.taps * width, threads);
#pragma omp parallel for num_threads(scatter_threads) schedule(static)
        for (std::int64_t m = 0; m < sizes.mg; ++m) {
          col2im_channel(shape, columns.get() + m * sizes.taps * width, width, row0, rows,
                         out_group + m * sizes.out_plane);
        }
      }
    }
  }
}

// integer_conv_transpose, of weights W (int16 centred, or int8 as stored).
template <typename W>
void integer_sums_transposed(const ConvShape& shape, const std::int16_t* x, const W* w,
                             const Tensor* bias, std::int32_t* y, int threads) {
  const TransposeSizes sizes = transpose_sizes(shape);
  std::vector<std::int32_t> columns(
      static_cast<std::size_t>(sizes.column_rows * sizes.chunk_rows * sizes.in_w));

  const std::int64_t planes = shape.batch * shape.out_channels;
  for (std::int64_t plane = 0; plane < planes; ++plane) {
    const std::int32_t value =
        bias != nullptr ? bias->data<std::int32_t>()[plane % shape.out_channels] : 0;
    std::fill(y + plane * sizes.out_plane, y + (plane + 1) * sizes.out_plane, value);
  }
  for (std::int64_t n = 0; n < shape.batch; ++n) {
    for (std::int64_t g = 0; g < shape.groups; ++g) {
      const std::int16_t* image = x + (n * shape.channels + g * sizes.cg) * sizes.in_plane;
      // W_g is [cg, mg * taps]: row j of the columns is W_g[:, j]^T X_g.
      const W* weights = w + g * sizes.cg * sizes.column_rows;
      std::int32_t* out_group = y + (n * shape.out_channels + g * sizes.mg) * sizes.out_plane;
      for (std::int64_t row0 = 0; row0 < sizes.in_rows; row0 += sizes.chunk_rows) {
        const std::int64_t rows = std::min(sizes.chunk_rows, sizes.in_rows - row0);
        const std::int64_t width = rows * sizes.in_w;
        // A block of input positions at a time: each weight row W_g[c, :]
        // (contiguous over j) is read once from memory per block and
        // multiplied into one accumulator row per position.
        const std::int64_t blocks = (width + kPositionBlock - 1) / kPositionBlock;
        const int team =
            loop_threads(blocks, kPositionBlock * sizes.cg * sizes.column_rows, threads);
#pragma omp parallel num_threads(team) if (team > 1)
        {
          std::vector<std::int32_t> sums(
              static_cast<std::size_t>(kPositionBlock * sizes.column_rows));
#pragma omp for schedule(static)
          for (std::int64_t b = 0; b < blocks; ++b) {
            const std::int64_t p0 = b * kPositionBlock;
            const std::int64_t count = std::min(kPositionBlock, width - p0);
            std::fill(sums.begin(), sums.end(), 0);
            for (std::int64_t c = 0; c < sizes.cg; ++c) {
              const W* row = weights + c * sizes.column_rows;
              const std::int16_t* values = image + c * sizes.in_plane + row0 * sizes.in_w + p0;
              for (std::int64_t k = 0; k < count; ++k) {
                const std::int32_t value = values[k];
                if (value == 0) continue;
                std::int32_t* into = sums.data() + k * sizes.column_rows;
#pragma omp simd
                for (std::int64_t j = 0; j < sizes.column_rows; ++j) into[j] += value * row[j];
              }
            }
            for (std::int64_t k = 0; k < count; ++k) {
              for (std::int64_t j = 0; j < sizes.column_rows; ++j) {
                columns[static_cast<std::size_t>(j * width + p0 + k)] =
                    sums[static_cast<std::size_t>(k * sizes.column_rows + j)];
              }
            }
          }
        }
        const int scatter_threads = loop_threads(sizes.mg, sizes.taps * width, threads);
#pragma omp parallel for num_threads(scatter_threads) schedule(static)
        for (std::int64_t m = 0; m < sizes.mg; ++m) {
          col2im_channel(shape, columns.data() + m * sizes.taps * width, width, row0, rows,
                         out_group + m * sizes.out_plane);
        }
      }
    }
  }
}

}  // namespace

void integer_conv_transpose(const ConvShape& shape, const std::int16_t* x, const std::int16_t* w,
                            const Tensor* bias, std::int32_t* y, int threads) {
  integer_sums_transposed(shape, x, w, bias, y, threads);
}

void integer_conv_transpose(const ConvShape& shape, const std::int16_t* x, const std::int8_t* w,
                            const Tensor* bias, std::int32_t* y, int threads) {
  integer_sums_transposed(shape, x, w, bias, y, threads);
}

namespace {

constexpr OpEntry kConvTransposeOps[] = {
    {"ConvTranspose", run_conv_transpose, check_conv},
};

}  // namespace

std::span<const OpEntry> conv_transpose_ops() { return kConvTransposeOps; }

}  // namespace collage::native
