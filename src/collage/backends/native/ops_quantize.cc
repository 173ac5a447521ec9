// Quantization: QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear,
// MatMulInteger and QLinearMatMul, the ops of ONNX's QDQ and dynamically
// quantized models.
//
// A quantized value q stands for (q - zero_point) * scale. Quantizing
// rounds x / scale half to even (the default floating-point rounding, as
// ONNX says), adds the zero point and saturates to the 8-bit range. Scales
// and zero points are one value, or (opset 13) one per index of `axis`.
// MatMulInteger multiplies 8-bit matrices after subtracting their zero
// points, into int32, with MatMul's broadcasting of the batch axes.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <type_traits>
#include <vector>

#include "collage/backends/native/broadcast.h"
#include "collage/backends/native/compute_kernels.h"
#include "collage/backends/native/quantize_math.h"
#include "collage/backends/native/tensor_kernels.h"
#include "collage/ir/error.h"

namespace collage::native {
namespace {

// The scale and zero point of element i: [outer, count, inner] with count
// the length of the quantization axis (1 for one value per tensor).
struct QuantAxis {
  std::int64_t count = 1, inner = 1;
  std::int64_t index(std::int64_t i) const { return count == 1 ? 0 : (i / inner) % count; }
};

// The axis of `scale` (and `zero_point`, when given, of the same size) for a
// tensor of `shape`.
QuantAxis quant_axis(const Node& node, const Shape& shape, const Tensor& scale,
                     const Tensor* zero_point) {
  if (zero_point != nullptr && zero_point->numel() != scale.numel()) {
    throw Error("the zero point and the scale differ in size", {.node = node.name});
  }
  QuantAxis q;
  if (scale.numel() == 1) return q;
  const int rank = static_cast<int>(shape.size());
  const int axis = normalize_axis(node.attributes.get_int("axis", 1), rank, node, "axis");
  if (scale.rank() != 1 || scale.numel() != shape[static_cast<std::size_t>(axis)]) {
    throw Error(fmt::format("the scale has {} values, not 1 or the {} of axis {}", scale.numel(),
                            shape[static_cast<std::size_t>(axis)], axis),
                {.node = node.name, .field = "scale"});
  }
  q.count = scale.numel();
  for (int d = axis + 1; d < rank; ++d) q.inner *= shape[static_cast<std::size_t>(d)];
  return q;
}

// Runs of elements share a scale and zero point: the whole tensor for one
// value per tensor, else `inner` elements at a time.
template <typename Q>
void quantize(const float* x, std::int64_t n, const float* scale, const Tensor* zero_point,
              const QuantAxis& axis, Q* y) {
  const Q* zp = zero_point != nullptr ? zero_point->data<Q>() : nullptr;
  const std::int64_t run = axis.count == 1 ? n : axis.inner;
  for (std::int64_t start = 0; start < n; start += run) {
    const std::int64_t k = axis.index(start);
    quantize_run(x + start, std::min(run, n - start), scale[k],
                 static_cast<float>(zp != nullptr ? zp[k] : 0), y + start);
  }
}

template <typename Q>
void dequantize(const Q* x, std::int64_t n, const float* scale, const Tensor* zero_point,
                const QuantAxis& axis, float* y) {
  const Q* zp = zero_point != nullptr ? zero_point->data<Q>() : nullptr;
  const std::int64_t run = axis.count == 1 ? n : axis.inner;
  for (std::int64_t start = 0; start < n; start += run) {
    const std::int64_t k = axis.index(start);
    dequantize_run(x + start, std::min(run, n - start), scale[k],
                   static_cast<std::int32_t>(zp != nullptr ? zp[k] : 0), y + start);
  }
}

bool is_8bit(std::optional<DType> dtype) { return dtype == DType::kInt8 || dtype == DType::kUInt8; }

void run_quantize_linear(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                         std::span<Tensor> outputs, int threads) {
  const Tensor& x = inputs[0];
  const Tensor& scale = inputs[1];
  const Tensor* zero_point = optional_input(inputs, 2);
  const QuantAxis axis = quant_axis(node, x.shape(), scale, zero_point);
  Tensor& y = outputs[0];
  if (y.dtype() == DType::kInt8) {
    quantize(x.data<float>(), x.numel(), scale.data<float>(), zero_point, axis,
             y.data<std::int8_t>());
  } else {
    quantize(x.data<float>(), x.numel(), scale.data<float>(), zero_point, axis,
             y.data<std::uint8_t>());
  }
}

bool check_quantize_linear(const Graph& graph, const Node& node) {
  if (node.inputs.size() < 2 || node.inputs.size() > 3 || node.outputs.size() != 1) return false;
  if (!is_float32(graph, node.input(0)) || !is_float32(graph, node.input(1))) return false;
  const DType out = output_dtype(graph, node, 0);
  if (!is_8bit(out)) return false;
  return node.input(2) == kNoValue || input_dtype(graph, node, 2) == out;
}

void run_dequantize_linear(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                           std::span<Tensor> outputs, int threads) {
  const Tensor& x = inputs[0];
  const Tensor& scale = inputs[1];
  const Tensor* zero_point = optional_input(inputs, 2);
  const QuantAxis axis = quant_axis(node, x.shape(), scale, zero_point);
  float* y = outputs[0].data<float>();
  switch (x.dtype()) {
    case DType::kInt8:
      return dequantize(x.data<std::int8_t>(), x.numel(), scale.data<float>(), zero_point, axis, y);
    case DType::kUInt8:
      return dequantize(x.data<std::uint8_t>(), x.numel(), scale.data<float>(), zero_point, axis,
                        y);
    default:
      return dequantize(x.data<std::int32_t>(), x.numel(), scale.data<float>(), zero_point, axis,
                        y);
  }
}

bool check_dequantize_linear(const Graph& graph, const Node& node) {
  if (node.inputs.size() < 2 || node.inputs.size() > 3 || node.outputs.size() != 1) return false;
  const std::optional<DType> in = input_dtype(graph, node, 0);
  if (!is_8bit(in) && in != DType::kInt32) return false;
  if (!is_float32(graph, node.input(1)) || !is_float32(graph, node.outputs[0])) return false;
  return node.input(2) == kNoValue || input_dtype(graph, node, 2) == in;
}

// y = saturate(round(x / scale) + zero_point) in uint8, with the scale and
// zero point that map [min(0, min x), max(0, max x)] onto [0, 255].
void run_dynamic_quantize_linear(const Graph& graph, const Node& node,
                                 std::span<const Tensor> inputs, std::span<Tensor> outputs,
                                 int threads) {
  const Tensor& x = inputs[0];
  const float* in = x.data<float>();
  float low = 0.0f, high = 0.0f;
  const std::int64_t x_count = x.numel();
  for (std::int64_t i = 0; i < x_count; ++i) {
    low = std::min(low, in[i]);
    high = std::max(high, in[i]);
  }
  const float scale = (high - low) / 255.0f;
  const std::uint8_t zero_point = scale == 0.0f ? 0 : saturate<std::uint8_t>(-low / scale);
  std::uint8_t* y = outputs[0].data<std::uint8_t>();
  for (std::int64_t i = 0; i < x_count; ++i) {
    y[i] = scale == 0.0f ? zero_point
                         : saturate<std::uint8_t>(std::nearbyint(in[i] / scale) + zero_point);
  }
  outputs[1].data<float>()[0] = scale;
  outputs[2].data<std::uint8_t>()[0] = zero_point;
}

bool check_dynamic_quantize_linear(const Graph& graph, const Node& node) {
  return node.inputs.size() == 1 && node.outputs.size() == 3 && is_float32(graph, node.input(0)) &&
         is_float32(graph, node.outputs[1]) && output_dtype(graph, node, 0) == DType::kUInt8 &&
         output_dtype(graph, node, 2) == DType::kUInt8;
}

template <typename A, typename B>
void matmul_integer(const Tensor& a, const Tensor& b, const Tensor* a_zero, const Tensor* b_zero,
                    Tensor& y, int threads) {
  const Shape& as = a.shape();
  const Shape& bs = b.shape();
  const std::int64_t m = as[as.size() - 2], k = as.back(), n = bs.back();
  const Shape a_batch(as.begin(), as.end() - 2), b_batch(bs.begin(), bs.end() - 2);
  const Shape batch = broadcast_shapes(a_batch, b_batch);
  const std::int64_t batches = shape_numel(batch);
  // Each batch index's offsets in A and B, broadcasting size-1 axes.
  auto offset_in = [&](const Shape& own, std::int64_t index, std::int64_t matrix) {
    std::int64_t offset = 0, stride = matrix;
    const auto shift = static_cast<std::ptrdiff_t>(batch.size() - own.size());
    for (auto d = static_cast<std::ptrdiff_t>(batch.size()) - 1; d >= 0; --d) {
      const std::int64_t coordinate = index % batch[static_cast<std::size_t>(d)];
      index /= batch[static_cast<std::size_t>(d)];
      if (d < shift) continue;
      const std::int64_t size = own[static_cast<std::size_t>(d - shift)];
      if (size != 1) offset += coordinate * stride;
      stride *= size;
    }
    return offset;
  };
  // A's zero point is one value or one per row; B's one or one per column.
  auto a_zp = [&](std::int64_t row) -> std::int32_t {
    if (a_zero == nullptr) return 0;
    return a_zero->numel() == 1 ? a_zero->data<A>()[0] : a_zero->data<A>()[row];
  };
  std::vector<std::int32_t> b_zp(static_cast<std::size_t>(n), 0);
  if (b_zero != nullptr) {
    for (std::int64_t j = 0; j < n; ++j) {
      b_zp[static_cast<std::size_t>(j)] = b_zero->data<B>()[b_zero->numel() == 1 ? 0 : j];
    }
  }
  std::int32_t* out = y.data<std::int32_t>();
  const int team = loop_threads(batches * m, k * n, threads);
#pragma omp parallel num_threads(team) if (team > 1)
  {
    std::vector<std::int32_t> row(static_cast<std::size_t>(n));
#pragma omp for schedule(static)
    for (std::int64_t bi = 0; bi < batches * m; ++bi) {
      const std::int64_t index = bi / m, i = bi % m;
      const A* a_row = a.data<A>() + offset_in(a_batch, index, m * k) + i * k;
      const B* b_matrix = b.data<B>() + offset_in(b_batch, index, k * n);
      std::fill(row.begin(), row.end(), 0);
      const std::int32_t azp = a_zp(i);
      for (std::int64_t p = 0; p < k; ++p) {
        const std::int32_t av = static_cast<std::int32_t>(a_row[p]) - azp;
        if (av == 0) continue;
        const B* b_row = b_matrix + p * n;
        std::int32_t* sums = row.data();
        const std::int32_t* zero = b_zp.data();
#pragma omp simd
        for (std::int64_t j = 0; j < n; ++j) {
          sums[j] += av * (static_cast<std::int32_t>(b_row[j]) - zero[j]);
        }
      }
      std::copy(row.begin(), row.end(), out + (index * m + i) * n);
    }
  }
}

void run_matmul_integer(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                        std::span<Tensor> outputs, int threads) {
  const Tensor& a = inputs[0];
  const Tensor& b = inputs[1];
  if (a.rank() < 2 || b.rank() < 2 || a.shape().back() != b.shape()[b.shape().size() - 2]) {
    throw Error(fmt::format("cannot multiply {} by {}", a.type().to_string(), b.type().to_string()),
                {.node = node.name});
  }
  const Tensor* a_zero = optional_input(inputs, 2);
  const Tensor* b_zero = optional_input(inputs, 3);
  const std::int64_t rows = a.shape()[a.shape().size() - 2], columns = b.shape().back();
  if ((a_zero != nullptr && a_zero->numel() != 1 && a_zero->numel() != rows) ||
      (b_zero != nullptr && b_zero->numel() != 1 && b_zero->numel() != columns)) {
    throw Error("a zero point is neither one value nor one per row of A or column of B",
                {.node = node.name});
  }
  const bool a_signed = a.dtype() == DType::kInt8, b_signed = b.dtype() == DType::kInt8;
  if (a_signed && b_signed) {
    matmul_integer<std::int8_t, std::int8_t>(a, b, a_zero, b_zero, outputs[0], threads);
  } else if (a_signed) {
    matmul_integer<std::int8_t, std::uint8_t>(a, b, a_zero, b_zero, outputs[0], threads);
  } else if (b_signed) {
    matmul_integer<std::uint8_t, std::int8_t>(a, b, a_zero, b_zero, outputs[0], threads);
  } else {
    matmul_integer<std::uint8_t, std::uint8_t>(a, b, a_zero, b_zero, outputs[0], threads);
  }
}

bool check_matmul_integer(const Graph& graph, const Node& node) {
  if (node.inputs.size() < 2 || node.inputs.size() > 4 || node.outputs.size() != 1) return false;
  const std::optional<DType> a = input_dtype(graph, node, 0), b = input_dtype(graph, node, 1);
  if (!is_8bit(a) || !is_8bit(b) || output_dtype(graph, node, 0) != DType::kInt32) {
    return false;
  }
  if (graph.type(node.input(0)).rank() < 2 || graph.type(node.input(1)).rank() < 2) return false;
  // Zero points: A's one value or one per row, B's one or one per column.
  for (std::size_t i : {std::size_t{2}, std::size_t{3}}) {
    const ValueId zp = node.input(i);
    if (zp == kNoValue) continue;
    if (input_dtype(graph, node, i) != (i == 2 ? a : b) || graph.type(zp).rank() > 1) return false;
  }
  return true;
}

// QLinearMatMul: MatMulInteger of the two operands, then the int32 sums
// requantized to y's scale and zero point. a's scale and zero point are one
// value or one per row, b's one value or one per column.
void run_qlinear_matmul(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                        std::span<Tensor> outputs, int threads) {
  const Tensor &a = inputs[0], &a_scale = inputs[1], &a_zero = inputs[2];
  const Tensor &b = inputs[3], &b_scale = inputs[4], &b_zero = inputs[5];
  const Tensor &y_scale = inputs[6], &y_zero = inputs[7];
  Tensor& y = outputs[0];
  Tensor sums = Tensor::allocate(TensorType{DType::kInt32, y.shape()});
  const std::array<Tensor, 4> operands = {a, b, a_zero, b_zero};
  std::array<Tensor, 1> product = {sums};
  run_matmul_integer(graph, node, operands, product, threads);
  const std::int64_t m = a.shape()[a.shape().size() - 2], n = b.shape().back();
  if ((a_scale.numel() != 1 && a_scale.numel() != m) ||
      (b_scale.numel() != 1 && b_scale.numel() != n) || y_scale.numel() != 1 ||
      y_zero.numel() != 1) {
    throw Error("a scale or zero point has a size QLinearMatMul does not take",
                {.node = node.name});
  }
  const float* as = a_scale.data<float>();
  const float* bs = b_scale.data<float>();
  const float output_scale = y_scale.data<float>()[0];
  const std::int32_t* in = sums.data<std::int32_t>();
  auto requantize = [&](auto* out, std::int32_t zero) {
    using Q = std::remove_pointer_t<decltype(out)>;
    const std::int64_t y_count = y.numel();
    for (std::int64_t i = 0; i < y_count; ++i) {
      const std::int64_t row = (i / n) % m, col = i % n;
      const float scale = as[a_scale.numel() == 1 ? 0 : row] * bs[b_scale.numel() == 1 ? 0 : col];
      out[i] = saturate<Q>(std::nearbyint(static_cast<float>(in[i]) * scale / output_scale) +
                           static_cast<float>(zero));
    }
  };
  if (y.dtype() == DType::kInt8) {
    requantize(y.data<std::int8_t>(), y_zero.data<std::int8_t>()[0]);
  } else {
    requantize(y.data<std::uint8_t>(), y_zero.data<std::uint8_t>()[0]);
  }
}

bool check_qlinear_matmul(const Graph& graph, const Node& node) {
  if (node.inputs.size() != 8 || node.outputs.size() != 1) return false;
  const std::optional<DType> a = input_dtype(graph, node, 0), b = input_dtype(graph, node, 3);
  const DType y = output_dtype(graph, node, 0);
  if (!is_8bit(a) || !is_8bit(b) || !is_8bit(y)) return false;
  if (input_dtype(graph, node, 2) != a || input_dtype(graph, node, 5) != b ||
      input_dtype(graph, node, 7) != y) {
    return false;
  }
  for (std::size_t i : {std::size_t{1}, std::size_t{4}, std::size_t{6}}) {
    if (!is_float32(graph, node.input(i)) || graph.type(node.input(i)).rank() > 1) return false;
  }
  return graph.type(node.input(0)).rank() >= 2 && graph.type(node.input(3)).rank() >= 2;
}

constexpr OpEntry kQuantizeOps[] = {
    {"QuantizeLinear", run_quantize_linear, check_quantize_linear},
    {"DequantizeLinear", run_dequantize_linear, check_dequantize_linear},
    {"DynamicQuantizeLinear", run_dynamic_quantize_linear, check_dynamic_quantize_linear},
    {"MatMulInteger", run_matmul_integer, check_matmul_integer},
    {"QLinearMatMul", run_qlinear_matmul, check_qlinear_matmul},
};

}  // namespace

std::span<const OpEntry> quantize_ops() { return kQuantizeOps; }

}  // namespace collage::native
