// Normalizations and softmax: BatchNormalization (inference form),
// LayerNormalization, InstanceNormalization, Softmax and LogSoftmax.
//
// All of them reduce along some axes and then rescale, so each splits the
// tensor into independent rows (a plane per (image, channel), a row per
// normalized slice) and runs rows in parallel. Softmax needs exp on every
// element, which libm computes one scalar at a time; exp8() (vector_math.h)
// is a vectorized exp, which makes softmax memory bound instead of exp
// bound.
#include <fmt/format.h>
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "collage/backends/native/compute_kernels.h"
#include "collage/backends/native/vector_math.h"
#include "collage/ir/error.h"

namespace collage::native {
namespace {

float exp1(float x) {
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, exp8(_mm256_set1_ps(x)));
  return lanes[0];
}

}  // namespace

float sum_exp_shifted(const float* x, float shift, std::int64_t count) {
  const __m256 s = _mm256_set1_ps(shift);
  __m256 sum = _mm256_setzero_ps();
  std::int64_t i = 0;
  for (; i + 8 <= count; i += 8) {
    sum = _mm256_add_ps(sum, exp8(_mm256_sub_ps(_mm256_loadu_ps(x + i), s)));
  }
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, sum);
  float total = 0.0f;
  for (float lane : lanes) total += lane;
  for (; i < count; ++i) total += exp1(x[i] - shift);
  return total;
}

namespace {

// y[i] = exp(x[i] - shift[i]) (shift broadcast when `shift_stride` is 0);
// returns the sum of the y[i].
float exp_shifted(const float* x, const float* shift, std::int64_t shift_stride, float* y,
                  std::int64_t count) {
  __m256 sum = _mm256_setzero_ps();
  std::int64_t i = 0;
  for (; i + 8 <= count; i += 8) {
    const __m256 s = shift_stride == 0 ? _mm256_broadcast_ss(shift) : _mm256_loadu_ps(shift + i);
    const __m256 e = exp8(_mm256_sub_ps(_mm256_loadu_ps(x + i), s));
    _mm256_storeu_ps(y + i, e);
    sum = _mm256_add_ps(sum, e);
  }
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, sum);
  float total = 0.0f;
  for (float lane : lanes) total += lane;
  for (; i < count; ++i) {
    y[i] = exp1(x[i] - shift[shift_stride * i]);
    total += y[i];
  }
  return total;
}

// Mean and biased variance of a row, in two passes for accuracy.
std::pair<float, float> row_moments(const float* x, std::int64_t count) {
  const float mean = row_sum(x, count) / static_cast<float>(count);
  float squares = 0.0f;
#pragma omp simd reduction(+ : squares)
  for (std::int64_t i = 0; i < count; ++i) squares += (x[i] - mean) * (x[i] - mean);
  return {mean, squares / static_cast<float>(count)};
}

std::int64_t product(const Shape& shape, std::size_t begin, std::size_t end) {
  std::int64_t result = 1;
  for (std::size_t i = begin; i < end; ++i) result *= shape[i];
  return result;
}

// `tensor` broadcast (numpy rules, aligned right) to `target`, as a dense buffer.
std::vector<float> broadcast_to(const Tensor& tensor, const Shape& target, const Node& node,
                                const char* what) {
  const Shape& source = tensor.shape();
  if (source.size() > target.size()) {
    throw Error(fmt::format("{} {} does not broadcast to {}", what, tensor.type().to_string(),
                            shape_to_string(target)),
                {.node = node.name});
  }
  const std::size_t lead = target.size() - source.size();
  std::vector<std::int64_t> strides(target.size(), 0);
  std::int64_t run = 1;
  for (std::size_t d = source.size(); d-- > 0;) {
    if (source[d] != 1 && source[d] != target[lead + d]) {
      throw Error(fmt::format("{} {} does not broadcast to {}", what, tensor.type().to_string(),
                              shape_to_string(target)),
                  {.node = node.name});
    }
    if (source[d] != 1) strides[lead + d] = run;
    run *= source[d];
  }
  const std::int64_t count = shape_numel(target);
  std::vector<float> result(static_cast<std::size_t>(count));
  const float* data = tensor.data<float>();
  for (std::int64_t i = 0; i < count; ++i) {
    std::int64_t offset = 0;
    for (std::size_t d = target.size(), rest = static_cast<std::size_t>(i); d-- > 0;) {
      offset += static_cast<std::int64_t>(rest % static_cast<std::size_t>(target[d])) * strides[d];
      rest /= static_cast<std::size_t>(target[d]);
    }
    result[static_cast<std::size_t>(i)] = data[offset];
  }
  return result;
}

bool only_first_output(const Node& node) {
  if (node.outputs.empty() || node.outputs[0] == kNoValue) return false;
  for (std::size_t i = 1; i < node.outputs.size(); ++i) {
    if (node.outputs[i] != kNoValue) return false;
  }
  return true;
}

template <bool log>
void softmax_kind(const Node& node, const Tensor& x, Tensor& y, bool coerce, int threads) {
  const int rank = x.rank();
  if (rank == 0 || y.shape() != x.shape()) {
    throw Error("Softmax needs an input of rank >= 1 and an output of the same shape",
                {.node = node.name});
  }
  const int axis =
      normalize_axis(node.attributes.get_int("axis", coerce ? 1 : -1), rank, node, "axis");
  const std::size_t a = static_cast<std::size_t>(axis);
  const std::int64_t outer = product(x.shape(), 0, a);
  const std::int64_t length = coerce ? product(x.shape(), a, x.shape().size()) : x.shape()[a];
  const std::int64_t inner = coerce ? 1 : product(x.shape(), a + 1, x.shape().size());
  const float* xd = x.data<float>();
  float* yd = y.data<float>();
  if (length == 0 || outer == 0 || inner == 0) return;

  if (inner == 1) {
#pragma omp parallel for num_threads(loop_threads(outer, length * 8, threads)) schedule(static)
    for (std::int64_t o = 0; o < outer; ++o) {
      const float* in = xd + o * length;
      float* out = yd + o * length;
      const float max = row_max(in, length);
      const float sum = exp_shifted(in, &max, 0, out, length);
      if constexpr (log) {
        // (x - max) - log(sum), not x - (max + log(sum)): the latter rounds
        // log(sum) to the precision of a large max.
        const float log_sum = std::log(sum);
#pragma omp simd
        for (std::int64_t i = 0; i < length; ++i) out[i] = (in[i] - max) - log_sum;
      } else {
        const float scale = 1.0f / sum;
#pragma omp simd
        for (std::int64_t i = 0; i < length; ++i) out[i] *= scale;
      }
    }
    return;
  }

  // The axis is not innermost: work on whole [length, inner] slabs, with
  // the running max and sum as vectors along the contiguous inner axis.
#pragma omp parallel for num_threads(loop_threads(outer, length* inner * 8, threads)) \
    schedule(static)
  for (std::int64_t o = 0; o < outer; ++o) {
    const float* in = xd + o * length * inner;
    float* out = yd + o * length * inner;
    std::vector<float> max(in, in + inner);
    std::vector<float> sum(static_cast<std::size_t>(inner), 0.0f);
    for (std::int64_t d = 1; d < length; ++d) max_into(max.data(), in + d * inner, inner);
    for (std::int64_t d = 0; d < length; ++d) {
      float* row = out + d * inner;
      exp_shifted(in + d * inner, max.data(), 1, row, inner);
      add_into(sum.data(), row, inner);
    }
    if constexpr (log) {
      for (std::int64_t i = 0; i < inner; ++i) sum[i] = std::log(sum[i]);
      for (std::int64_t d = 0; d < length; ++d) {
        const float* src = in + d * inner;
        float* row = out + d * inner;
#pragma omp simd
        for (std::int64_t i = 0; i < inner; ++i) row[i] = (src[i] - max[i]) - sum[i];
      }
    } else {
      for (std::int64_t i = 0; i < inner; ++i) sum[i] = 1.0f / sum[i];
      for (std::int64_t d = 0; d < length; ++d) {
        float* row = out + d * inner;
#pragma omp simd
        for (std::int64_t i = 0; i < inner; ++i) row[i] *= sum[i];
      }
    }
  }
}

}  // namespace

void softmax(const Node& node, const Tensor& x, Tensor& y, bool coerce, int threads) {
  softmax_kind<false>(node, x, y, coerce, threads);
}

namespace {

void run_batch_normalization(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                             std::span<Tensor> outputs, int threads) {
  const Tensor& x = inputs[0];
  Tensor& y = outputs[0];
  if (x.rank() < 2 || y.shape() != x.shape()) {
    throw Error("BatchNormalization needs an input of rank >= 2 and an output of the same shape",
                {.node = node.name});
  }
  const std::int64_t channels = x.shape()[1];
  for (std::size_t i = 1; i <= 4; ++i) {
    if (inputs[i].numel() != channels) {
      throw Error(
          fmt::format("input {} has {} values for {} channels", i, inputs[i].numel(), channels),
          {.node = node.name});
    }
  }
  const float epsilon = node.attributes.get_float("epsilon", 1e-5f);
  const float* scale = inputs[1].data<float>();
  const float* bias = inputs[2].data<float>();
  const float* mean = inputs[3].data<float>();
  const float* var = inputs[4].data<float>();
  // y = x * a + b per channel.
  std::vector<float> a(static_cast<std::size_t>(channels)), b(static_cast<std::size_t>(channels));
  for (std::int64_t c = 0; c < channels; ++c) {
    a[c] = scale[c] / std::sqrt(var[c] + epsilon);
    b[c] = bias[c] - mean[c] * a[c];
  }
  const std::int64_t planes = x.shape()[0] * channels;
  const std::int64_t size = product(x.shape(), 2, x.shape().size());
  const float* xd = x.data<float>();
  float* yd = y.data<float>();
#pragma omp parallel for num_threads(loop_threads(planes, size, threads)) schedule(static)
  for (std::int64_t plane = 0; plane < planes; ++plane) {
    const float pa = a[plane % channels];
    const float pb = b[plane % channels];
    const float* in = xd + plane * size;
    float* out = yd + plane * size;
#pragma omp simd
    for (std::int64_t i = 0; i < size; ++i) out[i] = in[i] * pa + pb;
  }
}

bool check_batch_normalization(const Graph& graph, const Node& node) {
  // Only the inference form: training mode and its extra outputs are not implemented.
  if (node.attributes.get_int("training_mode", 0) != 0) return false;
  if (node.attributes.has("spatial") && node.attributes.get_int("spatial") != 1) return false;
  if (node.inputs.size() != 5 || !only_first_output(node)) return false;
  for (ValueId input : node.inputs) {
    if (!is_float32(graph, input)) return false;
  }
  return float32_io(graph, node, 5) && graph.type(node.input(0)).rank() >= 2;
}

void run_layer_normalization(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                             std::span<Tensor> outputs, int threads) {
  const Tensor& x = inputs[0];
  Tensor& y = outputs[0];
  const int rank = x.rank();
  if (rank == 0 || y.shape() != x.shape()) {
    throw Error("LayerNormalization needs an input of rank >= 1 and an output of the same shape",
                {.node = node.name});
  }
  const int axis = normalize_axis(node.attributes.get_int("axis", -1), rank, node, "axis");
  const float epsilon = node.attributes.get_float("epsilon", 1e-5f);
  const Shape normalized(x.shape().begin() + axis, x.shape().end());
  const std::int64_t rows = product(x.shape(), 0, static_cast<std::size_t>(axis));
  const std::int64_t length = shape_numel(normalized);
  const std::vector<float> scale = broadcast_to(inputs[1], normalized, node, "Scale");
  const Tensor* bias_input = optional_input(inputs, 2);
  const std::vector<float> bias = bias_input != nullptr
                                      ? broadcast_to(*bias_input, normalized, node, "B")
                                      : std::vector<float>(static_cast<std::size_t>(length), 0.0f);
  float* mean_out = outputs.size() > 1 && !outputs[1].empty() ? outputs[1].data<float>() : nullptr;
  float* inv_std_out =
      outputs.size() > 2 && !outputs[2].empty() ? outputs[2].data<float>() : nullptr;
  for (std::size_t i = 1; i < outputs.size(); ++i) {
    if (!outputs[i].empty() && outputs[i].numel() != rows) {
      throw Error(fmt::format("output {} has {} values for {} rows", i, outputs[i].numel(), rows),
                  {.node = node.name});
    }
  }
  const float* xd = x.data<float>();
  float* yd = y.data<float>();
  if (length == 0) return;
#pragma omp parallel for num_threads(loop_threads(rows, length * 4, threads)) schedule(static)
  for (std::int64_t r = 0; r < rows; ++r) {
    const float* in = xd + r * length;
    float* out = yd + r * length;
    // A plain local for the simd loop: clang 14 cannot refer to a structured
    // binding inside an OpenMP region.
    const auto [row_mean, variance] = row_moments(in, length);
    const float mean = row_mean;
    const float inv_std = 1.0f / std::sqrt(variance + epsilon);
    const float* s = scale.data();
    const float* b = bias.data();
#pragma omp simd
    for (std::int64_t i = 0; i < length; ++i) out[i] = (in[i] - mean) * inv_std * s[i] + b[i];
    if (mean_out != nullptr) mean_out[r] = mean;
    if (inv_std_out != nullptr) inv_std_out[r] = inv_std;
  }
}

bool check_layer_normalization(const Graph& graph, const Node& node) {
  if (node.inputs.size() < 2 || node.outputs.empty() || node.outputs[0] == kNoValue) return false;
  if (node.outputs.size() > 3) return false;
  // stash_type 1 (float32) is the only computation type of float32 inputs here.
  if (node.attributes.get_int("stash_type", 1) != 1) return false;
  if (!is_float32(graph, node.input(0)) || !is_float32(graph, node.input(1))) return false;
  return float32_io(graph, node, 3) && graph.type(node.input(0)).rank() >= 1;
}

void run_instance_normalization(const Graph& graph, const Node& node,
                                std::span<const Tensor> inputs, std::span<Tensor> outputs,
                                int threads) {
  const Tensor& x = inputs[0];
  Tensor& y = outputs[0];
  if (x.rank() < 3 || y.shape() != x.shape()) {
    throw Error("InstanceNormalization needs an input of rank >= 3 and an output of the same shape",
                {.node = node.name});
  }
  const std::int64_t channels = x.shape()[1];
  if (inputs[1].numel() != channels || inputs[2].numel() != channels) {
    throw Error("scale and B need one value per channel", {.node = node.name});
  }
  const float epsilon = node.attributes.get_float("epsilon", 1e-5f);
  const float* scale = inputs[1].data<float>();
  const float* bias = inputs[2].data<float>();
  const std::int64_t planes = x.shape()[0] * channels;
  const std::int64_t size = product(x.shape(), 2, x.shape().size());
  const float* xd = x.data<float>();
  float* yd = y.data<float>();
  if (size == 0) return;
#pragma omp parallel for num_threads(loop_threads(planes, size * 4, threads)) schedule(static)
  for (std::int64_t plane = 0; plane < planes; ++plane) {
    const float* in = xd + plane * size;
    float* out = yd + plane * size;
    const auto [mean, variance] = row_moments(in, size);
    const float a = scale[plane % channels] / std::sqrt(variance + epsilon);
    const float b = bias[plane % channels] - mean * a;
#pragma omp simd
    for (std::int64_t i = 0; i < size; ++i) out[i] = in[i] * a + b;
  }
}

// GroupNormalization's scale and bias: one per channel (opset 21, and the
// fused op of fuse_group_norm) or one per group (opsets 18 to 20, whose
// models import with the op as it is); their length tells which.
struct GroupAffine {
  const float* scale;
  const float* bias;
  // Channels that share one value: 1, or the channels of a group.
  std::int64_t shared;

  float scale_of(std::int64_t channel) const { return scale[channel / shared]; }
  float bias_of(std::int64_t channel) const { return bias[channel / shared]; }
};

bool affine_fits(std::int64_t scale, std::int64_t bias, std::int64_t channels,
                 std::int64_t groups) {
  return scale == bias && (scale == channels || scale == groups);
}

GroupAffine group_affine(const Node& node, std::span<const Tensor> inputs, std::int64_t channels,
                         std::int64_t groups) {
  const std::int64_t count = inputs[1].numel();
  if (!affine_fits(count, inputs[2].numel(), channels, groups)) {
    throw Error("scale and bias need one value per channel or one per group", {.node = node.name});
  }
  return {inputs[1].data<float>(), inputs[2].data<float>(),
          count == channels ? 1 : channels / groups};
}

// GroupNormalization: each image's channels in `num_groups` groups of
// consecutive channels, each group normalized over its channels and the
// spatial axes, then scaled and shifted (GroupAffine). In plain layout a
// group is one contiguous run of the tensor.
void run_group_normalization(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                             std::span<Tensor> outputs, int threads) {
  const Tensor& x = inputs[0];
  Tensor& y = outputs[0];
  const std::int64_t groups = node.attributes.get_int("num_groups", 0);
  if (x.rank() < 3 || y.shape() != x.shape() || groups < 1 || x.shape()[1] % groups != 0) {
    throw Error(
        "GroupNormalization needs an input of rank >= 3 whose channels divide into num_groups, "
        "and an output of the same shape",
        {.node = node.name});
  }
  const std::int64_t channels = x.shape()[1];
  const GroupAffine affine = group_affine(node, inputs, channels, groups);
  const float epsilon = node.attributes.get_float("epsilon", 1e-5f);
  const std::int64_t per_group = channels / groups;
  const std::int64_t plane = product(x.shape(), 2, x.shape().size());
  const std::int64_t size = per_group * plane;
  const std::int64_t tasks = x.shape()[0] * groups;
  const float* xd = x.data<float>();
  float* yd = y.data<float>();
  if (size == 0) return;
#pragma omp parallel for num_threads(loop_threads(tasks, size * 4, threads)) schedule(static)
  for (std::int64_t task = 0; task < tasks; ++task) {
    const float* in = xd + task * size;
    float* out = yd + task * size;
    const auto [group_mean, variance] = row_moments(in, size);
    const float mean = group_mean;
    const float inv_std = 1.0f / std::sqrt(variance + epsilon);
    for (std::int64_t k = 0; k < per_group; ++k) {
      const std::int64_t c = (task % groups) * per_group + k;
      const float a = affine.scale_of(c) * inv_std;
      const float b = affine.bias_of(c) - mean * a;
      const float* from = in + k * plane;
      float* to = out + k * plane;
#pragma omp simd
      for (std::int64_t i = 0; i < plane; ++i) to[i] = from[i] * a + b;
    }
  }
}

bool check_group_normalization(const Graph& graph, const Node& node) {
  if (node.inputs.size() != 3 || node.outputs.size() != 1) return false;
  for (ValueId input : node.inputs) {
    if (!is_float32(graph, input)) return false;
  }
  if (!float32_io(graph, node, 3)) return false;
  const TensorType& x = graph.type(node.input(0));
  const std::int64_t groups = node.attributes.get_int("num_groups", 0);
  if (x.rank() < 3 || groups < 1 || x.shape[1] % groups != 0) return false;
  return affine_fits(graph.type(node.input(1)).numel(), graph.type(node.input(2)).numel(),
                     x.shape[1], groups);
}

bool check_instance_normalization(const Graph& graph, const Node& node) {
  if (node.inputs.size() != 3 || node.outputs.size() != 1) return false;
  for (ValueId input : node.inputs) {
    if (!is_float32(graph, input)) return false;
  }
  return float32_io(graph, node, 3) && graph.type(node.input(0)).rank() >= 3;
}

// LRN (AlexNet, GoogLeNet v1): each element over a power of the sum of
// squares of its neighbours across channels, the window of `size` channels
// from c - floor((size - 1) / 2) to c + ceil((size - 1) / 2), clipped.
void run_lrn(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
             std::span<Tensor> outputs, int threads) {
  const Tensor& x = inputs[0];
  Tensor& y = outputs[0];
  if (x.rank() < 3 || y.shape() != x.shape()) {
    throw Error("LRN needs an input of rank >= 3 and an output of the same shape",
                {.node = node.name});
  }
  const std::int64_t size = node.attributes.get_int("size");
  const float alpha = node.attributes.get_float("alpha", 1e-4f);
  const float beta = node.attributes.get_float("beta", 0.75f);
  const float bias = node.attributes.get_float("bias", 1.0f);
  const std::int64_t batch = x.shape()[0];
  const std::int64_t channels = x.shape()[1];
  const std::int64_t plane = product(x.shape(), 2, x.shape().size());
  const std::int64_t before = (size - 1) / 2;
  const std::int64_t after = size - 1 - before;
  const float* xd = x.data<float>();
  float* yd = y.data<float>();
  const std::int64_t planes = batch * channels;
  const float scale = alpha / static_cast<float>(size);
#pragma omp parallel for num_threads(loop_threads(planes, plane* size * 2, threads)) \
    schedule(static)
  for (std::int64_t index = 0; index < planes; ++index) {
    const std::int64_t n = index / channels;
    const std::int64_t c = index % channels;
    const std::int64_t first = std::max<std::int64_t>(0, c - before);
    const std::int64_t last = std::min(channels - 1, c + after);
    float* out = yd + index * plane;
    std::fill(out, out + plane, 0.0f);
    for (std::int64_t k = first; k <= last; ++k) {
      const float* in = xd + (n * channels + k) * plane;
#pragma omp simd
      for (std::int64_t i = 0; i < plane; ++i) out[i] += in[i] * in[i];
    }
    const float* in = xd + index * plane;
    for (std::int64_t i = 0; i < plane; ++i) {
      out[i] = in[i] / std::pow(bias + scale * out[i], beta);
    }
  }
}

bool check_lrn(const Graph& graph, const Node& node) {
  if (node.inputs.size() != 1 || node.outputs.size() != 1) return false;
  if (!is_float32(graph, node.input(0)) || !float32_io(graph, node, 1)) return false;
  return node.attributes.has("size") && node.attributes.get_int("size") >= 1 &&
         graph.type(node.input(0)).rank() >= 3;
}

// Before opset 13 the input is coerced to 2-D at `axis` and the softmax
// runs over the whole second dimension; from 13 on it runs along one axis.
void run_softmax(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                 std::span<Tensor> outputs, int threads) {
  softmax(node, inputs[0], outputs[0], graph.opset < 13, threads);
}

void run_log_softmax(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                     std::span<Tensor> outputs, int threads) {
  softmax_kind<true>(node, inputs[0], outputs[0], graph.opset < 13, threads);
}

bool check_softmax(const Graph& graph, const Node& node) {
  if (node.inputs.size() != 1 || node.outputs.size() != 1) return false;
  if (!is_float32(graph, node.input(0)) || !float32_io(graph, node, 1)) return false;
  const int rank = graph.type(node.input(0)).rank();
  const std::int64_t axis = node.attributes.get_int("axis", graph.opset < 13 ? 1 : -1);
  return rank >= 1 && axis >= -rank && axis < rank;
}

constexpr OpEntry kNormOps[] = {
    {"BatchNormalization", run_batch_normalization, check_batch_normalization},
    {"LayerNormalization", run_layer_normalization, check_layer_normalization},
    {"InstanceNormalization", run_instance_normalization, check_instance_normalization},
    {"GroupNormalization", run_group_normalization, check_group_normalization},
    {"LRN", run_lrn, check_lrn},
    {"Softmax", run_softmax, check_softmax},
    {"LogSoftmax", run_log_softmax, check_softmax},
};

}  // namespace

std::span<const OpEntry> norm_ops() { return kNormOps; }

namespace {

// Pixels whose values are summed in float before the sum joins a lane's
// double accumulator: few enough that float's rounding stays far below the
// tolerance, many enough that the lanes' sums stay in registers.
constexpr std::int64_t kFloatChunk = 64;

// Adds to acc[l], for each of L lanes at `base` (a pixel every `step`
// floats), the sum over pixels [first, last) of x (Power 1) or of
// (x - shift[l])^2 (Power 2).
template <int L, int Power>
void sum_lane_powers(const float* base, std::int64_t step, std::int64_t first, std::int64_t last,
                     const float* shift, double* acc) {
  double total[L] = {};
  for (std::int64_t chunk = first; chunk < last; chunk += kFloatChunk) {
    const std::int64_t end = std::min(last, chunk + kFloatChunk);
    float part[L] = {};
    for (std::int64_t p = chunk; p < end; ++p) {
      const float* px = base + p * step;
#pragma omp simd
      for (int l = 0; l < L; ++l) {
        if constexpr (Power == 1) {
          part[l] += px[l];
        } else {
          const float d = px[l] - shift[l];
          part[l] += d * d;
        }
      }
    }
    for (int l = 0; l < L; ++l) total[l] += part[l];
  }
  for (int l = 0; l < L; ++l) acc[l] += total[l];
}

// Floats of GroupNormalization's output its epilogue takes at a time.
constexpr std::int64_t kEpilogueFloats = 4096;

// Calls f(width, l) over a run of `lanes` lanes, sixteen at a time, then
// eight, then one: `width` a std::integral_constant, so that f can pass it
// on as the lane count of a kernel's registers.
template <typename F>
void for_lane_chunks(std::int64_t lanes, F&& f) {
  std::int64_t l = 0;
  for (; l + 16 <= lanes; l += 16) f(std::integral_constant<int, 16>{}, l);
  for (; l + 8 <= lanes; l += 8) f(std::integral_constant<int, 8>{}, l);
  for (; l < lanes; ++l) f(std::integral_constant<int, 1>{}, l);
}

// y = x * a[l] + b[l] for each of L lanes at `x` and `y` (a pixel every
// `step` floats) over pixels [first, last).
template <int L>
void scale_shift_lanes(const float* x, float* y, std::int64_t step, std::int64_t first,
                       std::int64_t last, const float* a, const float* b) {
  float scale[L];
  float offset[L];
  for (int l = 0; l < L; ++l) {
    scale[l] = a[l];
    offset[l] = b[l];
  }
  for (std::int64_t p = first; p < last; ++p) {
    const float* px = x + p * step;
    float* py = y + p * step;
#pragma omp simd
    for (int l = 0; l < L; ++l) py[l] = px[l] * scale[l] + offset[l];
  }
}

}  // namespace

void group_norm_in_lanes(const Node& node, std::span<const Tensor> inputs, Tensor& y,
                         std::int64_t lanes, int threads, std::span<const ElementwiseFn> epilogue) {
  const Tensor& x = inputs[0];
  const std::int64_t images = x.shape()[0];
  const std::int64_t channels = x.shape()[1];
  const std::int64_t pixels = x.shape()[2] * x.shape()[3];
  const std::int64_t groups = node.attributes.get_int("num_groups", 0);
  if (x.rank() != 4 || y.shape() != x.shape() || groups < 1 || channels % groups != 0 ||
      channels % lanes != 0) {
    throw Error(
        "GroupNormalization in runs of channels needs a 4-D input whose channels divide "
        "into num_groups and the runs",
        {.node = node.name});
  }
  const GroupAffine affine = group_affine(node, inputs, channels, groups);
  if (pixels == 0 || channels == 0) return;
  const float epsilon = node.attributes.get_float("epsilon", 1e-5f);
  const std::int64_t runs = channels / lanes;
  const std::int64_t per_group = channels / groups;
  // Tasks: (image, run, span of pixels), enough spans to share out.
  const std::int64_t wanted = 4 * static_cast<std::int64_t>(std::max(threads, 1));
  const std::int64_t spans =
      std::clamp<std::int64_t>((wanted + images * runs - 1) / (images * runs), 1, pixels);
  const std::int64_t span = (pixels + spans - 1) / spans;
  const std::int64_t tasks = images * runs * spans;
  const int team = loop_threads(tasks, span * lanes * 4, threads);
  const float* xd = x.data<float>();
  float* yd = y.data<float>();
  // Per task and lane, a partial sum (double: a group may hold a million
  // values); per image and channel, the shift subtracted, then a and b of
  // y = x * a + b.
  std::vector<double> partial(static_cast<std::size_t>(tasks * lanes));
  std::vector<float> shift(static_cast<std::size_t>(images * channels), 0.0f);
  auto task_range = [&](std::int64_t task, std::int64_t& image, std::int64_t& run,
                        std::int64_t& first, std::int64_t& last) {
    image = task / (runs * spans);
    run = (task / spans) % runs;
    first = (task % spans) * span;
    last = std::min(pixels, first + span);
  };
  // Sums over each task's pixels of (x - shift)^power, per lane (in float
  // over kFloatChunk pixels at a time, then in double).
  auto sum_powers = [&](int power) {
#pragma omp parallel for num_threads(team) schedule(static)
    for (std::int64_t task = 0; task < tasks; ++task) {
      std::int64_t image, run, first, last;
      task_range(task, image, run, first, last);
      double* acc = partial.data() + task * lanes;
      const float* m = shift.data() + image * channels + run * lanes;
      std::fill(acc, acc + lanes, 0.0);
      const float* base = xd + (image * runs + run) * pixels * lanes;
      for_lane_chunks(lanes, [&](auto width, std::int64_t l) {
        if (power == 1) {
          sum_lane_powers<decltype(width)::value, 1>(base + l, lanes, first, last, m + l, acc + l);
        } else {
          sum_lane_powers<decltype(width)::value, 2>(base + l, lanes, first, last, m + l, acc + l);
        }
      });
    }
  };
  // The partial sums of each image's groups, over count values each.
  auto group_totals = [&]() {
    std::vector<double> totals(static_cast<std::size_t>(images * groups), 0.0);
    for (std::int64_t task = 0; task < tasks; ++task) {
      std::int64_t image, run, first, last;
      task_range(task, image, run, first, last);
      for (std::int64_t l = 0; l < lanes; ++l) {
        const std::int64_t c = run * lanes + l;
        totals[static_cast<std::size_t>(image * groups + c / per_group)] +=
            partial[static_cast<std::size_t>(task * lanes + l)];
      }
    }
    return totals;
  };
  const double count = static_cast<double>(per_group * pixels);
  sum_powers(1);
  const std::vector<double> sums = group_totals();
  for (std::int64_t image = 0; image < images; ++image) {
    for (std::int64_t c = 0; c < channels; ++c) {
      shift[static_cast<std::size_t>(image * channels + c)] = static_cast<float>(
          sums[static_cast<std::size_t>(image * groups + c / per_group)] / count);
    }
  }
  sum_powers(2);
  const std::vector<double> squares = group_totals();
  std::vector<float> a(static_cast<std::size_t>(images * channels));
  std::vector<float> b(static_cast<std::size_t>(images * channels));
  for (std::int64_t image = 0; image < images; ++image) {
    for (std::int64_t c = 0; c < channels; ++c) {
      const std::size_t at = static_cast<std::size_t>(image * channels + c);
      const double variance =
          squares[static_cast<std::size_t>(image * groups + c / per_group)] / count;
      const float inv_std = static_cast<float>(1.0 / std::sqrt(variance + epsilon));
      a[at] = affine.scale_of(c) * inv_std;
      b[at] = affine.bias_of(c) - shift[at] * a[at];
    }
  }
  // The closing pass, a block of pixels at a time, so that the epilogue
  // reads each block while it is in cache: a task's pixels of one run of
  // lanes are consecutive in memory.
  const std::int64_t block = std::max<std::int64_t>(1, kEpilogueFloats / lanes);
#pragma omp parallel for num_threads(team) schedule(static)
  for (std::int64_t task = 0; task < tasks; ++task) {
    std::int64_t image, run, first, last;
    task_range(task, image, run, first, last);
    const float* ta = a.data() + image * channels + run * lanes;
    const float* tb = b.data() + image * channels + run * lanes;
    const std::int64_t offset = (image * runs + run) * pixels * lanes;
    for (std::int64_t from = first; from < last; from += block) {
      const std::int64_t to = std::min(last, from + block);
      for_lane_chunks(lanes, [&](auto width, std::int64_t l) {
        scale_shift_lanes<decltype(width)::value>(xd + offset + l, yd + offset + l, lanes, from, to,
                                                  ta + l, tb + l);
      });
      float* out = yd + offset + from * lanes;
      for (const ElementwiseFn& fn : epilogue) {
        fn.unary(out, 1, out, (to - from) * lanes, fn.params);
      }
    }
  }
}

}  // namespace collage::native
