// Quantized operators on 8-bit tensors: ConvInteger and QLinearConv of the
// ONNX domain, and the com.microsoft operators that ONNX Runtime's
// quantizer writes into QOperator models (QLinearAdd, QLinearMul,
// QLinearGlobalAveragePool, QLinearAveragePool, QLinearConcat,
// QLinearSigmoid, QLinearLeakyRelu, QLinearSoftmax, QGemm), and collage's
// QLinearHardSwish, QLinearHardSigmoid and QLinearConvTranspose, the units
// a quantized model's DequantizeLinear -> HardSwish, HardSigmoid or
// ConvTranspose -> QuantizeLinear become (ONNX Runtime has no such ops).
//
// The integer ops are exact: ConvInteger, QLinearConv, QLinearConvTranspose
// and QGemm sum (x - x_zero_point) (w - w_zero_point) in int32. QLinearConv
// and QLinearConvTranspose then requantize as ONNX's reference does: the sum
// times the float32 ratio x_scale * w_scale / y_scale, in double precision,
// plus y's zero point, saturated and rounded half to even. The
// com.microsoft ops are defined as dequantize, the float32 op, quantize
// (round half to even, saturate); the unary ones are a 256-entry table
// built that way.
#include <fmt/format.h>
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <variant>
#include <vector>

#include "collage/backends/native/broadcast.h"
#include "collage/backends/native/compute_kernels.h"
#include "collage/backends/native/quantize_math.h"
#include "collage/backends/native/tensor_kernels.h"
#include "collage/ir/error.h"
#include "collage/ir/passes/partial_type.h"

namespace collage::native {
namespace {

bool is_8bit(std::optional<DType> dtype) { return dtype == DType::kInt8 || dtype == DType::kUInt8; }

// Whether input i is absent or a float32 scalar (rank 0 or one element).
bool scalar_float_or_absent(const Graph& graph, const Node& node, std::size_t i) {
  const ValueId value = node.input(i);
  if (value == kNoValue) return true;
  const TensorType& type = graph.type(value);
  return type.dtype == DType::kFloat32 && is_static(type) && shape_numel(type.shape) == 1;
}

// Whether input i is absent or a scalar of `dtype`.
bool scalar_of_or_absent(const Graph& graph, const Node& node, std::size_t i,
                         std::optional<DType> dtype) {
  const ValueId value = node.input(i);
  if (value == kNoValue) return true;
  const TensorType& type = graph.type(value);
  return type.dtype == dtype && is_static(type) && shape_numel(type.shape) == 1;
}

// Whether input i is present and a float32 scalar.
bool scalar_float(const Graph& graph, const Node& node, std::size_t i) {
  return node.input(i) != kNoValue && scalar_float_or_absent(graph, node, i);
}

// Whether input i is absent or holds one value or `count` values of `dtype`
// (a per-output-channel parameter).
bool per_channel_or_absent(const Graph& graph, const Node& node, std::size_t i,
                           std::optional<DType> dtype, std::int64_t count) {
  const ValueId value = node.input(i);
  if (value == kNoValue) return true;
  const TensorType& type = graph.type(value);
  if (type.dtype != dtype || !is_static(type) || type.rank() > 1) return false;
  const std::int64_t n = shape_numel(type.shape);
  return n == 1 || n == count;
}

// The values of an 8-bit tensor minus its zero point, as int16.
std::vector<std::int16_t> centred(const Tensor& q, std::int32_t zero_point) {
  std::vector<std::int16_t> out(static_cast<std::size_t>(q.numel()));
  auto fill = [&](const auto* data) {
    for (std::size_t i = 0; i < out.size(); ++i) {
      out[i] = static_cast<std::int16_t>(static_cast<std::int32_t>(data[i]) - zero_point);
    }
  };
  if (q.dtype() == DType::kInt8) {
    fill(q.data<std::int8_t>());
  } else {
    fill(q.data<std::uint8_t>());
  }
  return out;
}

// The values of an 8-bit tensor, dequantized.
std::vector<float> dequantized(const Tensor& q, const QuantParams& params) {
  std::vector<float> out(static_cast<std::size_t>(q.numel()));
  if (q.dtype() == DType::kInt8) {
    dequantize_run(q.data<std::int8_t>(), q.numel(), params.scale, params.zero_point, out.data());
  } else {
    dequantize_run(q.data<std::uint8_t>(), q.numel(), params.scale, params.zero_point, out.data());
  }
  return out;
}

// out[i] = quantize(values[i]) for every element of the 8-bit `out`.
void quantize_all(const float* values, Tensor& out, const QuantParams& params) {
  const auto zero = static_cast<float>(params.zero_point);
  if (out.dtype() == DType::kInt8) {
    quantize_run(values, out.numel(), params.scale, zero, out.data<std::int8_t>());
  } else {
    quantize_run(values, out.numel(), params.scale, zero, out.data<std::uint8_t>());
  }
}

// --- ConvInteger and QLinearConv ---

// y[n, m, o] = bias[m] + sum over the window of (x - x_zero_point) *
// (w - w_zero_point[m]), the padding counting as x_zero_point (zero after
// the shift). `w_zero_point` is null, one value or one per output channel.
void integer_conv(const ConvShape& shape, const Tensor& x, std::int32_t x_zero_point,
                  const Tensor& w, const Tensor* w_zero_point, const Tensor* bias, std::int32_t* y,
                  int threads) {
  const std::int64_t cg = shape.group_channels();
  const std::int64_t mg = shape.group_out_channels();
  const std::int64_t taps = shape.kernel_size();
  const std::int64_t k = cg * taps;
  const std::int64_t in_plane = shape.input_plane();
  const std::int64_t out_plane = shape.output_plane();
  const std::vector<std::int16_t> xs = centred(x, x_zero_point);
  std::vector<std::int16_t> ws = centred(w, 0);
  for (std::int64_t m = 0; m < shape.out_channels; ++m) {
    const std::int32_t zp =
        w_zero_point == nullptr ? 0 : integer_at(w_zero_point, w_zero_point->numel() == 1 ? 0 : m);
    for (std::int64_t i = 0; i < k; ++i) ws[static_cast<std::size_t>(m * k + i)] -= zp;
  }
  const WindowAxis& d = shape.window[0];
  const WindowAxis& h = shape.window[1];
  const WindowAxis& wd = shape.window[2];
  // The k rows of the column matrix go in pairs: pair q holds rows 2q and
  // 2q + 1 side by side per output position, so that one vpmaddwd
  // multiplies eight positions by two taps' weights and adds each pair,
  // exactly (the centred values are at most 255 in magnitude). An odd k
  // gets a zero row.
  const std::int64_t pairs = (k + 1) / 2;
  // Per output channel and pair: the two weights as one int32 (low half:
  // the even row's).
  std::vector<std::int32_t> weight_pairs(static_cast<std::size_t>(shape.out_channels * pairs), 0);
  for (std::int64_t m = 0; m < shape.out_channels; ++m) {
    for (std::int64_t i = 0; i < k; ++i) {
      const auto bits = static_cast<std::uint16_t>(ws[static_cast<std::size_t>(m * k + i)]);
      weight_pairs[static_cast<std::size_t>(m * pairs + i / 2)] |=
          static_cast<std::int32_t>(static_cast<std::uint32_t>(bits) << (16 * (i % 2)));
    }
  }

  // The paired column matrix [pairs][out_plane][2] of one image and group.
  auto im2col = [&](std::int64_t n, std::int64_t g, std::int16_t* cols) {
    if (k % 2 != 0) {
      std::int16_t* last = cols + (pairs - 1) * out_plane * 2 + 1;
      for (std::int64_t p = 0; p < out_plane; ++p) last[2 * p] = 0;
    }
    for (std::int64_t c = 0; c < cg; ++c) {
      const std::int16_t* plane = xs.data() + (n * shape.channels + g * cg + c) * in_plane;
      for (std::int64_t kd = 0; kd < d.kernel; ++kd) {
        for (std::int64_t kh = 0; kh < h.kernel; ++kh) {
          for (std::int64_t kw = 0; kw < wd.kernel; ++kw) {
            const std::int64_t r = ((c * d.kernel + kd) * h.kernel + kh) * wd.kernel + kw;
            std::int16_t* row = cols + (r / 2) * out_plane * 2 + r % 2;
            for (std::int64_t od = 0; od < d.output; ++od) {
              const std::int64_t id = od * d.stride - d.pad_begin + kd * d.dilation;
              for (std::int64_t oh = 0; oh < h.output; ++oh) {
                const std::int64_t ih = oh * h.stride - h.pad_begin + kh * h.dilation;
                std::int16_t* out = row + (od * h.output + oh) * wd.output * 2;
                const bool inside = id >= 0 && id < d.input && ih >= 0 && ih < h.input;
                for (std::int64_t ow = 0; ow < wd.output; ++ow) {
                  const std::int64_t iw = ow * wd.stride - wd.pad_begin + kw * wd.dilation;
                  out[2 * ow] = inside && iw >= 0 && iw < wd.input
                                    ? plane[(id * h.input + ih) * wd.input + iw]
                                    : std::int16_t{0};
                }
              }
            }
          }
        }
      }
    }
  };
  // Output channels [m0, m0 + count) (absolute, count <= kBlock) of one
  // image, columns [p0, p0 + width) (width <= kTile), from the group's
  // paired columns: each stretch of a row pair is loaded once for the whole
  // block of channels, and the block's sums stay in L1.
  constexpr std::int64_t kBlock = 8, kTile = 512;
  auto block = [&](std::int64_t n, std::int64_t m0, std::int64_t count, std::int64_t p0,
                   std::int64_t width, const std::int16_t* cols) {
    std::array<std::array<std::int32_t, kTile>, kBlock> acc;
    for (std::int64_t j = 0; j < count; ++j) {
      const std::int32_t b = bias == nullptr ? 0 : integer_at(bias, m0 + j);
      std::fill(acc[j].begin(), acc[j].begin() + width, b);
    }
    for (std::int64_t q = 0; q < pairs; ++q) {
      const std::int16_t* row = cols + (q * out_plane + p0) * 2;
      for (std::int64_t j = 0; j < count; ++j) {
        const std::int32_t both = weight_pairs[static_cast<std::size_t>((m0 + j) * pairs + q)];
        if (both == 0) continue;
        std::int32_t* sums = acc[j].data();
        const __m256i weights = _mm256_set1_epi32(both);
        std::int64_t p = 0;
        for (; p + 8 <= width; p += 8) {
          const __m256i values = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + 2 * p));
          __m256i* at = reinterpret_cast<__m256i*>(sums + p);
          _mm256_storeu_si256(
              at, _mm256_add_epi32(_mm256_loadu_si256(at), _mm256_madd_epi16(values, weights)));
        }
        const auto even = static_cast<std::int16_t>(both & 0xffff);
        const auto odd = static_cast<std::int16_t>(static_cast<std::uint32_t>(both) >> 16);
        for (; p < width; ++p) sums[p] += even * row[2 * p] + odd * row[2 * p + 1];
      }
    }
    for (std::int64_t j = 0; j < count; ++j) {
      std::copy(acc[j].begin(), acc[j].begin() + width,
                y + (n * shape.out_channels + m0 + j) * out_plane + p0);
    }
  };
  const std::int64_t blocks = (mg + kBlock - 1) / kBlock;
  const std::int64_t tiles = (out_plane + kTile - 1) / kTile;
  // Piece t of a group: channel block t / tiles, column tile t % tiles.
  auto piece = [&](std::int64_t n, std::int64_t g, std::int64_t t, const std::int16_t* cols) {
    const std::int64_t m0 = g * mg + (t / tiles) * kBlock;
    const std::int64_t p0 = (t % tiles) * kTile;
    block(n, m0, std::min(kBlock, (g + 1) * mg - m0), p0, std::min(kTile, out_plane - p0), cols);
  };

  const std::int64_t units = shape.batch * shape.groups;
  const std::size_t col_size = static_cast<std::size_t>(pairs * out_plane * 2);
  if (threads > 1 && units >= threads) {
#pragma omp parallel num_threads(threads)
    {
      std::vector<std::int16_t> cols(col_size);
#pragma omp for schedule(dynamic, 1)
      for (std::int64_t unit = 0; unit < units; ++unit) {
        const std::int64_t n = unit / shape.groups, g = unit % shape.groups;
        im2col(n, g, cols.data());
        for (std::int64_t t = 0; t < blocks * tiles; ++t) piece(n, g, t, cols.data());
      }
    }
    return;
  }
  std::vector<std::int16_t> cols(col_size);
  const int team = loop_threads(blocks * tiles, kBlock * k * kTile, threads);
  for (std::int64_t unit = 0; unit < units; ++unit) {
    const std::int64_t n = unit / shape.groups, g = unit % shape.groups;
    im2col(n, g, cols.data());
#pragma omp parallel for num_threads(team) if (team > 1) schedule(static)
    for (std::int64_t t = 0; t < blocks * tiles; ++t) piece(n, g, t, cols.data());
  }
}

// The convolution sizes of x (by its shape) and w against the output y.
ConvShape quantized_conv_shape(const Node& node, const Tensor& x, const Tensor& w,
                               const Tensor& y) {
  const std::array<Tensor, 2> operands = {x, w};
  return conv_shape(node, operands, y);
}

void run_conv_integer(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                      std::span<Tensor> outputs, int threads) {
  const Tensor& x = inputs[0];
  const Tensor& w = inputs[1];
  const Tensor* x_zero = optional_input(inputs, 2);
  const Tensor* w_zero = optional_input(inputs, 3);
  const ConvShape shape = quantized_conv_shape(node, x, w, outputs[0]);
  if (x_zero != nullptr && x_zero->numel() != 1) {
    throw Error("x_zero_point must be one value", {.node = node.name, .field = "x_zero_point"});
  }
  if (w_zero != nullptr && w_zero->numel() != 1 && w_zero->numel() != shape.out_channels) {
    throw Error(fmt::format("w_zero_point has {} values, not 1 or one per output channel ({})",
                            w_zero->numel(), shape.out_channels),
                {.node = node.name, .field = "w_zero_point"});
  }
  integer_conv(shape, x, integer_at(x_zero, 0), w, w_zero, nullptr, outputs[0].data<std::int32_t>(),
               threads);
}

bool check_conv_integer(const Graph& graph, const Node& node) {
  if (node.inputs.size() < 2 || node.inputs.size() > 4 || node.outputs.size() != 1) return false;
  const std::optional<DType> x = input_dtype(graph, node, 0), w = input_dtype(graph, node, 1);
  if (!is_8bit(x) || !is_8bit(w) || output_dtype(graph, node, 0) != DType::kInt32) return false;
  if (node.attributes.get_int("group", 1) < 1) return false;
  const std::int64_t out_channels =
      graph.type(node.input(1)).shape.empty() ? 0 : graph.type(node.input(1)).shape[0];
  return scalar_of_or_absent(graph, node, 2, x) &&
         per_channel_or_absent(graph, node, 3, w, out_channels) &&
         conv_geometry_fits(graph, node, node.input(0), node.input(1));
}

// y = saturate(round(sums * x_scale * w_scale[c] / y_scale) + y_zero) for
// the int32 sums of a convolution [N, M, spatial...]: ONNX's reference
// forms the float32 ratio per output channel c and applies it in double
// precision. `w_scales` values are used cyclically: channel c takes
// w_scale[c % w_scales].
void requantize_channels(const Tensor& sums, const Tensor& x_scale, const Tensor& w_scale,
                         std::int64_t w_scales, const Tensor& y_scale, const Tensor& y_zero,
                         Tensor& y) {
  const std::int64_t m = y.shape()[1];
  const float xs = x_scale.data<float>()[0], ys = y_scale.data<float>()[0];
  std::vector<double> ratio(static_cast<std::size_t>(m));
  for (std::int64_t c = 0; c < m; ++c) {
    const float ws = w_scale.data<float>()[c % w_scales];
    ratio[static_cast<std::size_t>(c)] = static_cast<double>(xs * ws / ys);
  }
  const double zero = integer_at(&y_zero, 0);
  const std::int64_t plane = y.numel() / std::max<std::int64_t>(1, y.shape()[0] * m);
  const std::int32_t* in = sums.data<std::int32_t>();
  auto store = [&](auto* out) {
    using Q = std::remove_pointer_t<decltype(out)>;
    const double low = std::numeric_limits<Q>::min(), high = std::numeric_limits<Q>::max();
    const std::int64_t planes = plane == 0 ? 0 : y.numel() / plane;
    for (std::int64_t p = 0; p < planes; ++p) {
      const double r = ratio[static_cast<std::size_t>(p % m)];
      for (std::int64_t i = p * plane; i < (p + 1) * plane; ++i) {
        out[i] = static_cast<Q>(
            std::nearbyint(std::clamp(static_cast<double>(in[i]) * r + zero, low, high)));
      }
    }
  };
  if (y.dtype() == DType::kInt8) {
    store(y.data<std::int8_t>());
  } else {
    store(y.data<std::uint8_t>());
  }
}

// QLinearConv, and collage's QLinearConvTranspose (the same inputs,
// ConvTranspose's attributes and weights [C, M/g, k...]).
void run_qlinear_conv(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                      std::span<Tensor> outputs, int threads) {
  const Tensor &x = inputs[0], &x_scale = inputs[1], &x_zero = inputs[2];
  const Tensor &w = inputs[3], &w_scale = inputs[4], &w_zero = inputs[5];
  const Tensor &y_scale = inputs[6], &y_zero = inputs[7];
  const Tensor* bias = optional_input(inputs, 8);
  Tensor& y = outputs[0];
  const ConvShape shape = quantized_conv_shape(node, x, w, y);
  const bool transposed = is_transposed_convolution(node);
  const std::int64_t m = shape.out_channels;
  // A transposed convolution's weights give one scale per output channel of a group.
  const std::int64_t w_channels = transposed ? shape.group_out_channels() : m;
  if ((w_scale.numel() != 1 && w_scale.numel() != w_channels) ||
      (w_zero.numel() != 1 && w_zero.numel() != w_channels)) {
    throw Error(fmt::format("w_scale and w_zero_point must have 1 or {} values", w_channels),
                {.node = node.name, .field = "w_scale"});
  }
  if (x_scale.numel() != 1 || x_zero.numel() != 1 || y_scale.numel() != 1 || y_zero.numel() != 1) {
    throw Error("the scales and zero points of x and y must be one value each",
                {.node = node.name});
  }
  if (bias != nullptr && bias->numel() != m) {
    throw Error(fmt::format("B has {} values, not one per output channel ({})", bias->numel(), m),
                {.node = node.name, .field = "B"});
  }
  Tensor sums = Tensor::allocate(TensorType{DType::kInt32, y.shape()});
  if (transposed) {
    const std::vector<std::int16_t> xs = centred(x, integer_at(&x_zero, 0));
    bool zero_points_0 = true;
    for (std::int64_t i = 0; i < w_zero.numel(); ++i) zero_points_0 &= integer_at(&w_zero, i) == 0;
    if (w.dtype() == DType::kInt8 && zero_points_0) {
      integer_conv_transpose(shape, xs.data(), w.data<std::int8_t>(), bias,
                             sums.data<std::int32_t>(), threads);
    } else {
      // Weights [C, M/g, k...]: output channel o of a group has zero point o (or the one).
      const std::int64_t taps = shape.kernel_size();
      std::vector<std::int16_t> ws = centred(w, 0);
      for (std::int64_t row = 0; row < w.shape()[0] * w_channels; ++row) {
        const std::int32_t z = integer_at(&w_zero, w_zero.numel() == 1 ? 0 : row % w_channels);
        for (std::int16_t* v = ws.data() + row * taps; v != ws.data() + (row + 1) * taps; ++v) {
          *v = static_cast<std::int16_t>(*v - z);
        }
      }
      integer_conv_transpose(shape, xs.data(), ws.data(), bias, sums.data<std::int32_t>(), threads);
    }
  } else {
    integer_conv(shape, x, integer_at(&x_zero, 0), w, &w_zero, bias, sums.data<std::int32_t>(),
                 threads);
  }
  requantize_channels(sums, x_scale, w_scale, w_scale.numel(), y_scale, y_zero, y);
}

bool check_qlinear_conv(const Graph& graph, const Node& node) {
  if (node.inputs.size() < 8 || node.inputs.size() > 9 || node.outputs.size() != 1) return false;
  const std::optional<DType> x = input_dtype(graph, node, 0), w = input_dtype(graph, node, 3);
  const DType y = output_dtype(graph, node, 0);
  if (!is_8bit(x) || !is_8bit(w) || !is_8bit(y)) return false;
  if (node.input(2) == kNoValue || node.input(5) == kNoValue || node.input(7) == kNoValue) {
    return false;
  }
  const Shape& w_shape = graph.type(node.input(3)).shape;
  const std::int64_t group = node.attributes.get_int("group", 1);
  if (group < 1 || w_shape.size() < 2) return false;
  const bool transposed = is_transposed_convolution(node);
  const std::int64_t w_channels = transposed ? w_shape[1] : w_shape[0];
  const std::int64_t out_channels = transposed ? w_shape[1] * group : w_shape[0];
  return scalar_float(graph, node, 1) && scalar_of_or_absent(graph, node, 2, x) &&
         per_channel_or_absent(graph, node, 4, DType::kFloat32, w_channels) &&
         per_channel_or_absent(graph, node, 5, w, w_channels) && scalar_float(graph, node, 6) &&
         scalar_of_or_absent(graph, node, 7, y) &&
         (node.input(8) == kNoValue || (input_dtype(graph, node, 8) == DType::kInt32 &&
                                        graph.type(node.input(8)).shape == Shape{out_channels})) &&
         conv_geometry_fits(graph, node, node.input(0), node.input(3));
}

// --- com.microsoft: elementwise ---

// QLinearAdd and QLinearMul: (A, A_scale, A_zero_point, B, B_scale,
// B_zero_point, C_scale, C_zero_point) with numpy broadcasting.
template <bool multiply>
void run_qlinear_binary(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                        std::span<Tensor> outputs, int threads) {
  const Tensor& a = inputs[0];
  const Tensor& b = inputs[3];
  const QuantParams pa = quant_params(inputs[1], optional_input(inputs, 2));
  const QuantParams pb = quant_params(inputs[4], optional_input(inputs, 5));
  const QuantParams pc = quant_params(inputs[6], optional_input(inputs, 7));
  Tensor& c = outputs[0];
  if (a.shape() == c.shape() && b.shape() == c.shape()) {
    // No broadcasting: one pass, dequantize, op and quantize per element.
    auto same_shape = [&](const auto* x, const auto* z, auto* r) {
      using Q = std::remove_pointer_t<decltype(r)>;
      constexpr float low = static_cast<float>(std::numeric_limits<Q>::min());
      constexpr float high = static_cast<float>(std::numeric_limits<Q>::max());
      const float zero = static_cast<float>(pc.zero_point);
      const std::int64_t n = c.numel();
      const int team = threads_for(n, threads);
#pragma omp parallel for simd num_threads(team) if (team > 1) schedule(static)
      for (std::int64_t i = 0; i < n; ++i) {
        const float u = pa.dequantize(x[i]), v = pb.dequantize(z[i]);
        const float value = multiply ? u * v : u + v;
        r[i] = static_cast<Q>(std::clamp(std::nearbyint(value / pc.scale) + zero, low, high));
      }
    };
    if (c.dtype() == DType::kInt8) {
      return same_shape(a.data<std::int8_t>(), b.data<std::int8_t>(), c.data<std::int8_t>());
    }
    return same_shape(a.data<std::uint8_t>(), b.data<std::uint8_t>(), c.data<std::uint8_t>());
  }
  const std::vector<float> av = dequantized(a, pa), bv = dequantized(b, pb);
  std::vector<float> cv(static_cast<std::size_t>(c.numel()));
  const std::array<Shape, 2> shapes = {a.shape(), b.shape()};
  const BroadcastPlan plan = plan_broadcast(c.shape(), shapes);
  const std::int64_t sa = plan.inner_stride(0), sb = plan.inner_stride(1);
  for_each_run(plan, threads, [&](std::int64_t out, const std::int64_t* in, std::int64_t n) {
    const float* x = av.data() + in[0];
    const float* z = bv.data() + in[1];
    float* r = cv.data() + out;
    for (std::int64_t i = 0; i < n; ++i) {
      r[i] = multiply ? x[i * sa] * z[i * sb] : x[i * sa] + z[i * sb];
    }
  });
  quantize_all(cv.data(), c, pc);
}

bool check_qlinear_binary(const Graph& graph, const Node& node) {
  if (node.inputs.size() < 7 || node.inputs.size() > 8 || node.outputs.size() != 1) return false;
  const std::optional<DType> a = input_dtype(graph, node, 0), b = input_dtype(graph, node, 3);
  const DType c = output_dtype(graph, node, 0);
  if (!is_8bit(a) || a != b || c != a) return false;
  return scalar_float(graph, node, 1) && scalar_of_or_absent(graph, node, 2, a) &&
         scalar_float(graph, node, 4) && scalar_of_or_absent(graph, node, 5, b) &&
         scalar_float(graph, node, 6) && scalar_of_or_absent(graph, node, 7, c) &&
         broadcasts_to(graph.type(node.input(0)).shape, graph.type(node.outputs[0]).shape) &&
         broadcasts_to(graph.type(node.input(3)).shape, graph.type(node.outputs[0]).shape);
}

enum class UnaryFunction { kSigmoid, kLeakyRelu, kHardSwish, kHardSigmoid };

// QLinearSigmoid, QLinearLeakyRelu and collage's QLinearHardSwish and
// QLinearHardSigmoid: (X, X_scale, X_zero_point, Y_scale, Y_zero_point),
// through a table of the 256 inputs, each computed in float32 as the float
// op computes it.
template <UnaryFunction function>
void run_qlinear_unary(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                       std::span<Tensor> outputs, int threads) {
  const Tensor& x = inputs[0];
  const QuantParams px = quant_params(inputs[1], optional_input(inputs, 2));
  const QuantParams py = quant_params(inputs[3], optional_input(inputs, 4));
  Tensor& y = outputs[0];
  const float alpha = node.attributes.get_float("alpha", 0.01f);
  const float hard_alpha = node.attributes.get_float("alpha", 0.2f);
  const float hard_beta = node.attributes.get_float("beta", 0.5f);
  const bool signed_input = x.dtype() == DType::kInt8;
  // table[q - low] for every input value q.
  const std::int32_t low = signed_input ? -128 : 0;
  std::array<float, 256> values{};
  for (std::int32_t q = low; q < low + 256; ++q) {
    const float v = px.dequantize(q);
    float result = 0.0f;
    switch (function) {
      case UnaryFunction::kSigmoid:
        result = 1.0f / (1.0f + std::exp(-v));
        break;
      case UnaryFunction::kLeakyRelu:
        result = v >= 0.0f ? v : alpha * v;
        break;
      case UnaryFunction::kHardSwish:
        result = v * std::min(std::max(v * (1.0f / 6.0f) + 0.5f, 0.0f), 1.0f);
        break;
      case UnaryFunction::kHardSigmoid:
        result = std::min(std::max(hard_alpha * v + hard_beta, 0.0f), 1.0f);
        break;
    }
    values[static_cast<std::size_t>(q - low)] = result;
  }
  Tensor table = Tensor::allocate(TensorType{y.dtype(), {256}});
  quantize_all(values.data(), table, py);
  auto map = [&](const auto* in, auto* out) {
    using T = std::remove_pointer_t<decltype(out)>;
    const T* t = table.data<T>();
    const std::int64_t count = x.numel();
    for (std::int64_t i = 0; i < count; ++i) out[i] = t[static_cast<std::int32_t>(in[i]) - low];
  };
  if (signed_input) {
    if (y.dtype() == DType::kInt8) return map(x.data<std::int8_t>(), y.data<std::int8_t>());
    return map(x.data<std::int8_t>(), y.data<std::uint8_t>());
  }
  if (y.dtype() == DType::kInt8) return map(x.data<std::uint8_t>(), y.data<std::int8_t>());
  map(x.data<std::uint8_t>(), y.data<std::uint8_t>());
}

// (X, X_scale, X_zero_point, Y_scale, Y_zero_point) with X and Y 8-bit.
bool check_x_to_y(const Graph& graph, const Node& node) {
  if (node.inputs.size() < 4 || node.inputs.size() > 5 || node.outputs.size() != 1) return false;
  const std::optional<DType> x = input_dtype(graph, node, 0);
  const DType y = output_dtype(graph, node, 0);
  if (!is_8bit(x) || !is_8bit(y)) return false;
  return scalar_float(graph, node, 1) && scalar_of_or_absent(graph, node, 2, x) &&
         scalar_float(graph, node, 3) && scalar_of_or_absent(graph, node, 4, y);
}

bool check_qlinear_unary(const Graph& graph, const Node& node) {
  return check_x_to_y(graph, node) &&
         graph.type(node.input(0)).shape == graph.type(node.outputs[0]).shape;
}

// Whether a QLinearSoftmax coerces its input to a matrix: its `opset`
// attribute (the Softmax's; the graph's when absent) is before 13.
bool softmax_coerces(const Graph& graph, const Node& node) {
  return node.attributes.get_int("opset", graph.opset) < 13;
}

// com.microsoft QLinearSoftmax: dequantize, Softmax along `axis` as the
// opset in attribute `opset` defines it (coerced to a matrix before 13),
// quantize.
void run_qlinear_softmax(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                         std::span<Tensor> outputs, int threads) {
  const Tensor& x = inputs[0];
  Tensor& y = outputs[0];
  const std::vector<float> values =
      dequantized(x, quant_params(inputs[1], optional_input(inputs, 2)));
  Tensor real = Tensor::from_vector<float>(values, x.shape());
  Tensor result = Tensor::allocate(TensorType{DType::kFloat32, x.shape()});
  softmax(node, real, result, softmax_coerces(graph, node), threads);
  quantize_all(result.data<float>(), y, quant_params(inputs[3], optional_input(inputs, 4)));
}

bool check_qlinear_softmax(const Graph& graph, const Node& node) {
  if (!check_qlinear_unary(graph, node)) return false;
  const int rank = graph.type(node.input(0)).rank();
  const std::int64_t axis = node.attributes.get_int("axis", softmax_coerces(graph, node) ? 1 : -1);
  return rank >= 1 && axis >= -rank && axis < rank;
}

// --- com.microsoft: pooling and concatenation ---

// QLinearGlobalAveragePool: the mean of each (image, channel) plane, channels
// second (NCHW) or, with channels_last, last (NHWC). The sum is exact; the
// mean is (sum - size * zero_point) / size in double, times x_scale.
void run_qlinear_global_average_pool(const Graph& graph, const Node& node,
                                     std::span<const Tensor> inputs, std::span<Tensor> outputs,
                                     int threads) {
  const Tensor& x = inputs[0];
  const QuantParams px = quant_params(inputs[1], optional_input(inputs, 2));
  const QuantParams py = quant_params(inputs[3], optional_input(inputs, 4));
  Tensor& y = outputs[0];
  const bool channels_last = node.attributes.get_int("channels_last", 0) != 0;
  const Shape& s = x.shape();
  const std::int64_t batch = s[0];
  const std::int64_t channels = channels_last ? s.back() : s[1];
  const std::int64_t size = batch * channels == 0 ? 0 : x.numel() / (batch * channels);
  if (y.numel() != batch * channels) {
    throw Error(
        fmt::format("output {} does not fit input {}", y.type().to_string(), x.type().to_string()),
        {.node = node.name});
  }
  std::vector<float> means(static_cast<std::size_t>(batch * channels));
  auto sum_planes = [&](const auto* data) {
    for (std::int64_t n = 0; n < batch; ++n) {
      for (std::int64_t c = 0; c < channels; ++c) {
        std::int64_t sum = 0;
        for (std::int64_t i = 0; i < size; ++i) {
          sum += channels_last ? data[(n * size + i) * channels + c]
                               : data[(n * channels + c) * size + i];
        }
        const double mean = static_cast<double>(sum - size * px.zero_point) /
                            static_cast<double>(std::max<std::int64_t>(size, 1));
        means[static_cast<std::size_t>(n * channels + c)] = static_cast<float>(mean) * px.scale;
      }
    }
  };
  if (x.dtype() == DType::kInt8) {
    sum_planes(x.data<std::int8_t>());
  } else {
    sum_planes(x.data<std::uint8_t>());
  }
  quantize_all(means.data(), y, py);
}

bool check_qlinear_global_average_pool(const Graph& graph, const Node& node) {
  if (!check_x_to_y(graph, node)) return false;
  const int rank = graph.type(node.input(0)).rank();
  return rank >= 3 && graph.type(node.outputs[0]).rank() == rank &&
         node.attributes.get_int("channels_last", 0) >= 0;
}

// QLinearAveragePool (channels second): AveragePool's float kernel between
// dequantization and quantization.
void run_qlinear_average_pool(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                              std::span<Tensor> outputs, int threads) {
  const Tensor& x = inputs[0];
  const QuantParams px = quant_params(inputs[1], optional_input(inputs, 2));
  const QuantParams py = quant_params(inputs[3], optional_input(inputs, 4));
  Tensor& y = outputs[0];
  const std::vector<float> xv = dequantized(x, px);
  std::array<Tensor, 1> pool_in = {Tensor::allocate(TensorType{DType::kFloat32, x.shape()})};
  std::copy(xv.begin(), xv.end(), pool_in[0].data<float>());
  std::array<Tensor, 1> pool_out = {Tensor::allocate(TensorType{DType::kFloat32, y.shape()})};
  const OpEntry* pool = find_op("AveragePool");
  pool->run(graph, node, pool_in, pool_out, threads);
  quantize_all(pool_out[0].data<float>(), y, py);
}

bool check_qlinear_average_pool(const Graph& graph, const Node& node) {
  if (!check_x_to_y(graph, node) || node.attributes.get_int("channels_last", 0) != 0) return false;
  const std::int64_t include_pad = node.attributes.get_int("count_include_pad", 0);
  if (include_pad != 0 && include_pad != 1) return false;
  const Shape& x = graph.type(node.input(0)).shape;
  const int rank = static_cast<int>(x.size());
  if (rank < 3 || rank > 5 || graph.type(node.outputs[0]).rank() != rank) return false;
  const auto kernel = node.attributes.all().find("kernel_shape");
  if (kernel == node.attributes.all().end()) return false;
  const auto* kernel_shape = std::get_if<std::vector<std::int64_t>>(&kernel->second);
  return kernel_shape != nullptr &&
         forward_window(node, Shape(x.begin() + 2, x.end()), *kernel_shape).ok();
}

// QLinearConcat: (Y_scale, Y_zero_point, then X, X_scale, X_zero_point per
// input), each input requantized to Y's parameters through a table.
void run_qlinear_concat(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                        std::span<Tensor> outputs, int threads) {
  Tensor& y = outputs[0];
  const QuantParams py = quant_params(inputs[0], optional_input(inputs, 1));
  const int rank = y.rank();
  const int axis = normalize_axis(node.attributes.get_int("axis", 0), rank, node, "axis");
  std::int64_t outer = 1, inner = 1;
  for (int i = 0; i < axis; ++i) outer *= y.shape()[static_cast<std::size_t>(i)];
  for (int i = axis + 1; i < rank; ++i) inner *= y.shape()[static_cast<std::size_t>(i)];
  const std::int64_t out_row = y.shape()[static_cast<std::size_t>(axis)] * inner;
  std::int64_t offset = 0;
  const std::size_t element = dtype_size(y.dtype());
  auto* out = static_cast<std::uint8_t*>(y.raw());
  for (std::size_t first = 2; first + 2 < inputs.size() + 1; first += 3) {
    const Tensor& x = inputs[first];
    const QuantParams px = quant_params(inputs[first + 1], optional_input(inputs, first + 2));
    const std::vector<float> values = dequantized(x, px);
    Tensor requantized = Tensor::allocate(TensorType{y.dtype(), x.shape()});
    quantize_all(values.data(), requantized, py);
    const std::int64_t row =
        x.rank() == rank ? x.shape()[static_cast<std::size_t>(axis)] * inner : 0;
    const auto* in = static_cast<const std::uint8_t*>(requantized.raw());
    for (std::int64_t o = 0; o < outer; ++o) {
      std::copy(in + o * row * element, in + (o + 1) * row * element,
                out + (o * out_row + offset) * element);
    }
    offset += row;
  }
}

bool check_qlinear_concat(const Graph& graph, const Node& node) {
  if (node.inputs.size() < 5 || (node.inputs.size() - 2) % 3 != 0 || node.outputs.size() != 1) {
    return false;
  }
  const DType y = output_dtype(graph, node, 0);
  if (!is_8bit(y) || !scalar_float(graph, node, 0) || !scalar_of_or_absent(graph, node, 1, y)) {
    return false;
  }
  const Shape& out = graph.type(node.outputs[0]).shape;
  const int rank = static_cast<int>(out.size());
  std::int64_t axis = node.attributes.get_int("axis", 0);
  if (axis < -rank || axis >= rank || rank == 0) return false;
  if (axis < 0) axis += rank;
  std::int64_t along = 0;
  for (std::size_t first = 2; first < node.inputs.size(); first += 3) {
    const std::optional<DType> x = input_dtype(graph, node, first);
    if (x != y || !scalar_float(graph, node, first + 1) ||
        !scalar_of_or_absent(graph, node, first + 2, x)) {
      return false;
    }
    const Shape& shape = graph.type(node.input(first)).shape;
    if (static_cast<int>(shape.size()) != rank) return false;
    for (int d = 0; d < rank; ++d) {
      if (d != axis && shape[static_cast<std::size_t>(d)] != out[static_cast<std::size_t>(d)]) {
        return false;
      }
    }
    along += shape[static_cast<std::size_t>(axis)];
  }
  return along == out[static_cast<std::size_t>(axis)];
}

// --- com.microsoft: QGemm ---

// QGemm: (A, a_scale, a_zero_point, B, b_scale, b_zero_point, C, y_scale,
// y_zero_point) with transA, transB and alpha. The int32 sums of
// (A - a_zp)(B - b_zp) plus C (int32, at the sums' scale) times
// alpha * a_scale * b_scale[column]: float32 when y_scale is absent, else
// quantized to y's parameters. b's scale and zero point are one value or one
// per column.
void run_qgemm(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
               std::span<Tensor> outputs, int threads) {
  const Tensor &a = inputs[0], &a_scale = inputs[1];
  const Tensor& b = inputs[3];
  const Tensor& b_scale = inputs[4];
  const Tensor* a_zero = optional_input(inputs, 2);
  const Tensor* b_zero = optional_input(inputs, 5);
  const Tensor* c = optional_input(inputs, 6);
  const Tensor* y_scale = optional_input(inputs, 7);
  const Tensor* y_zero = optional_input(inputs, 8);
  Tensor& y = outputs[0];
  const bool trans_a = node.attributes.get_int("transA", 0) != 0;
  const bool trans_b = node.attributes.get_int("transB", 0) != 0;
  const float alpha = node.attributes.get_float("alpha", 1.0f);
  if (a.rank() != 2 || b.rank() != 2) {
    throw Error("A and B must be matrices", {.node = node.name});
  }
  const std::int64_t m = trans_a ? a.shape()[1] : a.shape()[0];
  const std::int64_t k = trans_a ? a.shape()[0] : a.shape()[1];
  const std::int64_t n = trans_b ? b.shape()[0] : b.shape()[1];
  if ((trans_b ? b.shape()[1] : b.shape()[0]) != k || y.shape() != Shape{m, n}) {
    throw Error(fmt::format("cannot multiply {} by {} into {}", a.type().to_string(),
                            b.type().to_string(), y.type().to_string()),
                {.node = node.name});
  }
  if ((b_scale.numel() != 1 && b_scale.numel() != n) ||
      (b_zero != nullptr && b_zero->numel() != 1 && b_zero->numel() != n)) {
    throw Error(fmt::format("b_scale and b_zero_point must have 1 or {} values", n),
                {.node = node.name, .field = "b_scale"});
  }
  // A - a_zp as [m][k]; B read in place, its zero points taken out after
  // the sums: sum_p a'(b - z_j) = sum_p a' b - z_j sum_p a'.
  const std::vector<std::int16_t> a_values = centred(a, integer_at(a_zero, 0));
  std::vector<std::int32_t> av(static_cast<std::size_t>(m * k));
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t p = 0; p < k; ++p) {
      av[static_cast<std::size_t>(i * k + p)] =
          a_values[static_cast<std::size_t>(trans_a ? p * m + i : i * k + p)];
    }
  }
  std::vector<std::int32_t> b_zp(static_cast<std::size_t>(n), 0);
  if (b_zero != nullptr) {
    const std::int64_t count = b_zero->numel();
    for (std::int64_t j = 0; j < n; ++j) {
      b_zp[static_cast<std::size_t>(j)] = integer_at(b_zero, count == 1 ? 0 : j);
    }
  }
  std::vector<std::int32_t> sums(static_cast<std::size_t>(m * n), 0);
  if (c != nullptr) {
    const std::array<Shape, 1> c_shape = {c->shape()};
    const BroadcastPlan plan = plan_broadcast(y.shape(), c_shape);
    for_each_run(plan, 1, [&](std::int64_t out, const std::int64_t* in, std::int64_t count) {
      for (std::int64_t i = 0; i < count; ++i) {
        sums[static_cast<std::size_t>(out + i)] = integer_at(c, in[0] + i * plan.inner_stride(0));
      }
    });
  }
  auto multiply = [&](const auto* bd) {
    const int team = loop_threads(m * n, k, threads);
    for (std::int64_t i = 0; i < m; ++i) {
      const std::int32_t* a_row = av.data() + i * k;
      std::int32_t a_sum = 0;
      for (std::int64_t p = 0; p < k; ++p) a_sum += a_row[p];
      std::int32_t* row = sums.data() + i * n;
      if (trans_b) {
        // B is [n][k]: one contiguous dot product per column.
#pragma omp parallel for num_threads(team) if (team > 1) schedule(static)
        for (std::int64_t j = 0; j < n; ++j) {
          const auto* b_row = bd + j * k;
          std::int32_t dot = 0;
#pragma omp simd reduction(+ : dot)
          for (std::int64_t p = 0; p < k; ++p)
            dot += a_row[p] * static_cast<std::int32_t>(b_row[p]);
          row[j] += dot - b_zp[static_cast<std::size_t>(j)] * a_sum;
        }
      } else {
        for (std::int64_t p = 0; p < k; ++p) {
          const std::int32_t a_ip = a_row[p];
          if (a_ip == 0) continue;
          const auto* b_row = bd + p * n;
#pragma omp simd
          for (std::int64_t j = 0; j < n; ++j) row[j] += a_ip * static_cast<std::int32_t>(b_row[j]);
        }
        for (std::int64_t j = 0; j < n; ++j) row[j] -= b_zp[static_cast<std::size_t>(j)] * a_sum;
      }
    }
  };
  if (b.dtype() == DType::kInt8) {
    multiply(b.data<std::int8_t>());
  } else {
    multiply(b.data<std::uint8_t>());
  }
  const float as = a_scale.data<float>()[0];
  const bool one_b_scale = b_scale.numel() == 1;
  std::vector<float> values(static_cast<std::size_t>(m * n));
  for (std::int64_t i = 0; i < m * n; ++i) {
    const float bs = b_scale.data<float>()[one_b_scale ? 0 : i % n];
    values[static_cast<std::size_t>(i)] =
        static_cast<float>(sums[static_cast<std::size_t>(i)]) * (alpha * as * bs);
  }
  if (y_scale == nullptr) {
    std::copy(values.begin(), values.end(), y.data<float>());
    return;
  }
  quantize_all(values.data(), y, quant_params(*y_scale, y_zero));
}

bool check_qgemm(const Graph& graph, const Node& node) {
  if (node.inputs.size() < 5 || node.inputs.size() > 9 || node.outputs.size() != 1) return false;
  const std::optional<DType> a = input_dtype(graph, node, 0), b = input_dtype(graph, node, 3);
  if (!is_8bit(a) || !is_8bit(b)) return false;
  const Shape& as = graph.type(node.input(0)).shape;
  const Shape& bs = graph.type(node.input(3)).shape;
  if (as.size() != 2 || bs.size() != 2) return false;
  const bool trans_b = node.attributes.get_int("transB", 0) != 0;
  const std::int64_t n = trans_b ? bs[0] : bs[1];
  const bool quantized_output = node.inputs.size() > 7 && node.input(7) != kNoValue;
  const DType y = output_dtype(graph, node, 0);
  if (quantized_output ? !is_8bit(y) : y != DType::kFloat32) return false;
  if (node.inputs.size() > 6 && node.input(6) != kNoValue &&
      (input_dtype(graph, node, 6) != DType::kInt32 ||
       !broadcasts_to(graph.type(node.input(6)).shape, graph.type(node.outputs[0]).shape))) {
    return false;
  }
  return scalar_float(graph, node, 1) && scalar_of_or_absent(graph, node, 2, a) &&
         per_channel_or_absent(graph, node, 4, DType::kFloat32, n) && node.input(4) != kNoValue &&
         (node.inputs.size() <= 5 || per_channel_or_absent(graph, node, 5, b, n)) &&
         (!quantized_output || scalar_float(graph, node, 7)) &&
         (node.inputs.size() <= 8 || scalar_of_or_absent(graph, node, 8, y));
}

constexpr OpEntry kQLinearOps[] = {
    {"ConvInteger", run_conv_integer, check_conv_integer},
    {"QLinearConv", run_qlinear_conv, check_qlinear_conv},
    {"collage.QLinearConvTranspose", run_qlinear_conv, check_qlinear_conv},
    {"com.microsoft.QLinearAdd", run_qlinear_binary<false>, check_qlinear_binary},
    {"com.microsoft.QLinearMul", run_qlinear_binary<true>, check_qlinear_binary},
    {"com.microsoft.QLinearSigmoid", run_qlinear_unary<UnaryFunction::kSigmoid>,
     check_qlinear_unary},
    {"com.microsoft.QLinearSoftmax", run_qlinear_softmax, check_qlinear_softmax},
    {"com.microsoft.QLinearLeakyRelu", run_qlinear_unary<UnaryFunction::kLeakyRelu>,
     check_qlinear_unary},
    {"collage.QLinearHardSwish", run_qlinear_unary<UnaryFunction::kHardSwish>, check_qlinear_unary},
    {"collage.QLinearHardSigmoid", run_qlinear_unary<UnaryFunction::kHardSigmoid>,
     check_qlinear_unary},
    {"com.microsoft.QLinearGlobalAveragePool", run_qlinear_global_average_pool,
     check_qlinear_global_average_pool},
    {"com.microsoft.QLinearAveragePool", run_qlinear_average_pool, check_qlinear_average_pool},
    {"com.microsoft.QLinearConcat", run_qlinear_concat, check_qlinear_concat},
    {"com.microsoft.QGemm", run_qgemm, check_qgemm},
};

}  // namespace

std::span<const OpEntry> qlinear_ops() { return kQLinearOps; }

}  // namespace collage::native
