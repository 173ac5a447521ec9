#include <fmt/format.h>
#include <immintrin.h>

#include <algorithm>
#include <cassert>
#include <limits>
#include <vector>

#include "collage/backends/native/compute_kernels.h"
#include "collage/backends/native/op_registry.h"
#include "collage/ir/error.h"

namespace collage::native {
namespace {

// Work (elementary operations) below which a parallel loop costs more in
// thread wake-up than it saves.
constexpr std::int64_t kMinParallelWork = 1 << 15;

}  // namespace

std::span<const OpEntry> compute_ops() {
  static const std::vector<OpEntry> table = [] {
    std::vector<OpEntry> entries;
    for (std::span<const OpEntry> part :
         {conv_ops(), conv_transpose_ops(), gemm_ops(), pool_ops(), norm_ops(), reduce_ops(),
          resize_ops(), grid_sample_ops(), roi_align_ops(), recurrent_ops(), quantize_ops(),
          qlinear_ops()}) {
      entries.insert(entries.end(), part.begin(), part.end());
    }
    return entries;
  }();
  return table;
}

bool is_float32(const Graph& graph, ValueId value) {
  return value != kNoValue && graph.type(value).dtype == DType::kFloat32;
}

bool float32_io(const Graph& graph, const Node& node, std::size_t float_inputs) {
  for (std::size_t i = 0; i < std::min(float_inputs, node.inputs.size()); ++i) {
    if (node.inputs[i] != kNoValue && !is_float32(graph, node.inputs[i])) return false;
  }
  for (ValueId output : node.outputs) {
    if (output != kNoValue && !is_float32(graph, output)) return false;
  }
  return true;
}

const Tensor* optional_input(std::span<const Tensor> inputs, std::size_t i) {
  if (i >= inputs.size() || inputs[i].empty()) return nullptr;
  return &inputs[i];
}

int normalize_axis(std::int64_t axis, int rank, const Node& node, std::string_view field) {
  if (axis < -rank || axis >= rank) {
    throw Error(fmt::format("axis {} is out of range for rank {}", axis, rank),
                {.node = node.name, .field = std::string(field)});
  }
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

Window3d window_3d(const Window& window) {
  assert(window.rank() >= 1 && window.rank() <= 3 && "window_3d: 1 to 3 spatial axes");
  Window3d result{};
  std::copy(window.axes.begin(), window.axes.end(),
            result.end() - static_cast<std::ptrdiff_t>(window.rank()));
  return result;
}

bool is_transposed_convolution(const Node& node) {
  return node.op_type == "ConvTranspose" || node.op_type == "QLinearConvTranspose";
}

ConvShape conv_shape(const Node& node, std::span<const Tensor> inputs, const Tensor& y) {
  const bool transposed = is_transposed_convolution(node);
  const Tensor& x = inputs[0];
  const Tensor& w = inputs[1];
  const int spatial = x.rank() - 2;
  if (spatial < 1 || spatial > 3 || w.rank() != x.rank() || y.rank() != x.rank()) {
    throw Error(fmt::format("unsupported ranks: input {}, weights {}, output {}",
                            x.type().to_string(), w.type().to_string(), y.type().to_string()),
                {.node = node.name});
  }
  ConvShape shape;
  shape.batch = x.shape()[0];
  shape.channels = x.shape()[1];
  shape.groups = node.attributes.get_int("group", 1);
  // Conv weights are [M, C / group, k...], ConvTranspose weights [C, M / group, k...].
  shape.out_channels = transposed ? w.shape()[1] * shape.groups : w.shape()[0];
  auto weights_fit = [&] {
    if (transposed) return w.shape()[0] == shape.channels;
    return shape.out_channels % shape.groups == 0 && w.shape()[1] * shape.groups == shape.channels;
  };
  if (shape.groups < 1 || shape.channels % shape.groups != 0 || !weights_fit()) {
    throw Error(fmt::format("group {} does not fit input {} and weights {}", shape.groups,
                            x.type().to_string(), w.type().to_string()),
                {.node = node.name, .field = "group"});
  }
  if (y.shape()[0] != shape.batch || y.shape()[1] != shape.out_channels) {
    throw Error("output batch or channels do not match", {.node = node.name});
  }
  const Shape input_spatial(x.shape().begin() + 2, x.shape().end());
  const Shape kernel(w.shape().begin() + 2, w.shape().end());
  const Window window = transposed ? transposed_window_or_throw(node, input_spatial, kernel)
                                   : forward_window_or_throw(node, input_spatial, kernel);
  if (window.output_shape() != Shape(y.shape().begin() + 2, y.shape().end())) {
    if (node.attributes.has("output_shape")) {
      throw Error(fmt::format("output_shape does not match the output {}", y.type().to_string()),
                  {.node = node.name, .field = "output_shape"});
    }
    throw Error(
        fmt::format("output {} does not match the {} of input {}", y.type().to_string(),
                    transposed ? "transposed convolution" : "convolution", x.type().to_string()),
        {.node = node.name});
  }
  shape.window = window_3d(window);
  const Tensor* bias = optional_input(inputs, 2);
  if (bias != nullptr && bias->numel() != shape.out_channels) {
    throw Error("bias length does not match the output channels", {.node = node.name});
  }
  return shape;
}

PhasePlane::PhasePlane(const WindowAxis& height, const WindowAxis& width) : h_(height), w_(width) {
  rows_ = (h_.output - 1) * h_.stride + h_.extent();
  const std::int64_t columns = (w_.output - 1) * w_.stride + w_.extent();
  phase_width_ = (columns + w_.stride - 1) / w_.stride;
  row_size_ = w_.stride * phase_width_;
  for (std::int64_t kx = 0; kx < w_.kernel; ++kx) {
    const std::int64_t column = kx * w_.dilation;
    tap_offset_.push_back(column % w_.stride * phase_width_ + column / w_.stride);
  }
  data_.resize(static_cast<std::size_t>(rows_ * row_size_));
  if (w_.stride == 2) {
    even_.resize(static_cast<std::size_t>((w_.input + 1) / 2));
    odd_.resize(static_cast<std::size_t>(w_.input / 2));
  }
}

namespace {

// even[u] = src[2u], odd[u] = src[2u + 1] for a row of `count` floats.
void deinterleave(const float* src, std::int64_t count, float* even, float* odd) {
  std::int64_t i = 0;
  for (; i + 16 <= count; i += 16) {
    const __m256 a = _mm256_loadu_ps(src + i);
    const __m256 b = _mm256_loadu_ps(src + i + 8);
    // Within each 128-bit lane: [a0 a2 b0 b2 | a4 a6 b4 b6]; then order the lanes.
    const __m256 e = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0));
    const __m256 o = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1));
    _mm256_storeu_ps(even + i / 2,
                     _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(e), 0xD8)));
    _mm256_storeu_ps(odd + i / 2,
                     _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(o), 0xD8)));
  }
  for (; i < count; ++i) (i % 2 == 0 ? even : odd)[i / 2] = src[i];
}

// out[t] = source[t + shift] where that is inside [0, length), else fill.
void shifted_copy(const float* source, std::int64_t length, std::int64_t shift, float* out,
                  std::int64_t count, float fill) {
  const std::int64_t lo = std::clamp<std::int64_t>(-shift, 0, count);
  const std::int64_t hi = std::clamp<std::int64_t>(length - shift, lo, count);
  std::fill(out, out + lo, fill);
  std::copy(source + lo + shift, source + hi + shift, out + lo);
  std::fill(out + hi, out + count, fill);
}

}  // namespace

void PhasePlane::load(const float* plane, float fill) {
  for (std::int64_t row = 0; row < rows_; ++row) {
    float* dst = data_.data() + row * w_.stride * phase_width_;
    const std::int64_t in_row = row - h_.pad_begin;
    if (in_row < 0 || in_row >= h_.input) {
      std::fill(dst, dst + w_.stride * phase_width_, fill);
      continue;
    }
    const float* src = plane + in_row * w_.input;
    if (w_.stride == 1) {
      // Padded column c holds input column c - pad_begin.
      shifted_copy(src, w_.input, -w_.pad_begin, dst, phase_width_, fill);
      continue;
    }
    if (w_.stride == 2) {
      // Phase q, element t holds input column q + 2t - pad_begin: an even
      // or odd input column, depending on the parity of q - pad_begin.
      deinterleave(src, w_.input, even_.data(), odd_.data());
      for (std::int64_t phase = 0; phase < 2; ++phase) {
        const std::int64_t base = phase - w_.pad_begin;
        const bool odd = (base % 2 + 2) % 2 == 1;
        const std::int64_t shift = (base - (odd ? 1 : 0)) / 2;
        const std::vector<float>& source = odd ? odd_ : even_;
        shifted_copy(source.data(), static_cast<std::int64_t>(source.size()), shift,
                     dst + phase * phase_width_, phase_width_, fill);
      }
      continue;
    }
    for (std::int64_t phase = 0; phase < w_.stride; ++phase) {
      // Element t holds input column phase + t * stride - pad_begin; the
      // ones inside the input are t in [lo, hi).
      float* out = dst + phase * phase_width_;
      const std::int64_t first = phase - w_.pad_begin;
      const std::int64_t lo = std::clamp<std::int64_t>(
          first >= 0 ? 0 : (-first + w_.stride - 1) / w_.stride, 0, phase_width_);
      const std::int64_t last = w_.input - 1 - first;
      const std::int64_t hi =
          std::clamp<std::int64_t>(last < 0 ? 0 : last / w_.stride + 1, lo, phase_width_);
      std::fill(out, out + lo, fill);
      const float* column = src + first;
      for (std::int64_t t = lo; t < hi; ++t) out[t] = column[t * w_.stride];
      std::fill(out + hi, out + phase_width_, fill);
    }
  }
}

float row_max(const float* x, std::int64_t count) {
  __m256 m0 = _mm256_set1_ps(-std::numeric_limits<float>::infinity());
  __m256 m1 = m0;
  std::int64_t i = 0;
  for (; i + 16 <= count; i += 16) {
    m0 = _mm256_max_ps(m0, _mm256_loadu_ps(x + i));
    m1 = _mm256_max_ps(m1, _mm256_loadu_ps(x + i + 8));
  }
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, _mm256_max_ps(m0, m1));
  float result = lanes[0];
  for (int l = 1; l < 8; ++l) result = std::max(result, lanes[l]);
  for (; i < count; ++i) result = std::max(result, x[i]);
  return result;
}

float row_sum(const float* x, std::int64_t count) {
  __m256 s0 = _mm256_setzero_ps();
  __m256 s1 = s0;
  std::int64_t i = 0;
  for (; i + 16 <= count; i += 16) {
    s0 = _mm256_add_ps(s0, _mm256_loadu_ps(x + i));
    s1 = _mm256_add_ps(s1, _mm256_loadu_ps(x + i + 8));
  }
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, _mm256_add_ps(s0, s1));
  float result = 0.0f;
  for (float lane : lanes) result += lane;
  for (; i < count; ++i) result += x[i];
  return result;
}

void max_into(float* dst, const float* src, std::int64_t count) {
  std::int64_t i = 0;
  for (; i + 8 <= count; i += 8) {
    _mm256_storeu_ps(dst + i, _mm256_max_ps(_mm256_loadu_ps(dst + i), _mm256_loadu_ps(src + i)));
  }
  for (; i < count; ++i) dst[i] = std::max(dst[i], src[i]);
}

void add_into(float* dst, const float* src, std::int64_t count) {
  std::int64_t i = 0;
  for (; i + 8 <= count; i += 8) {
    _mm256_storeu_ps(dst + i, _mm256_add_ps(_mm256_loadu_ps(dst + i), _mm256_loadu_ps(src + i)));
  }
  for (; i < count; ++i) dst[i] += src[i];
}

int loop_threads(std::int64_t units, std::int64_t work_per_unit, int threads) {
  if (threads <= 1 || units <= 1) return 1;
  if (units * work_per_unit < kMinParallelWork) return 1;
  return static_cast<int>(std::min<std::int64_t>(threads, units));
}

}  // namespace collage::native
