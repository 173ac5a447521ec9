// The arithmetic every quantized op shares.
//
// A quantized value q of scale s and zero point z stands for (q - z) * s.
// Quantizing rounds half to even (the default floating-point rounding, as
// ONNX says) and saturates to the 8-bit range.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "collage/ir/tensor.h"

namespace collage::native {

// round(value) saturated to Q's range.
template <typename Q>
Q saturate(float value) {
  const float low = static_cast<float>(std::numeric_limits<Q>::min());
  const float high = static_cast<float>(std::numeric_limits<Q>::max());
  return static_cast<Q>(std::clamp(std::nearbyint(value), low, high));
}

// y[i] = saturate(round(x[i] / scale) + zero_point) for a run of n values
// that share one scale and zero point (vectorized).
template <typename Q>
void quantize_run(const float* x, std::int64_t n, float scale, float zero_point, Q* y) {
  constexpr float low = static_cast<float>(std::numeric_limits<Q>::min());
  constexpr float high = static_cast<float>(std::numeric_limits<Q>::max());
#pragma omp simd
  for (std::int64_t i = 0; i < n; ++i) {
    y[i] = static_cast<Q>(std::clamp(std::nearbyint(x[i] / scale) + zero_point, low, high));
  }
}

// y[i] = (x[i] - zero_point) * scale for a run of n values (vectorized).
template <typename Q>
void dequantize_run(const Q* x, std::int64_t n, float scale, std::int32_t zero_point, float* y) {
#pragma omp simd
  for (std::int64_t i = 0; i < n; ++i) {
    y[i] = static_cast<float>(static_cast<std::int32_t>(x[i]) - zero_point) * scale;
  }
}

// Element i of an int8, uint8 or int32 tensor as int32; 0 for an omitted
// (null) tensor, such as a zero point a node leaves out.
inline std::int32_t integer_at(const Tensor* tensor, std::int64_t i) {
  if (tensor == nullptr) return 0;
  switch (tensor->dtype()) {
    case DType::kInt8:
      return tensor->data<std::int8_t>()[i];
    case DType::kUInt8:
      return tensor->data<std::uint8_t>()[i];
    default:
      return tensor->data<std::int32_t>()[i];
  }
}

// The quantization parameters of one 8-bit tensor with one scale and zero
// point for all of it.
struct QuantParams {
  float scale = 1.0f;
  std::int32_t zero_point = 0;

  float dequantize(std::int32_t q) const { return static_cast<float>(q - zero_point) * scale; }
};

// The scalar parameters given by a scale tensor and an optional zero point.
inline QuantParams quant_params(const Tensor& scale, const Tensor* zero_point) {
  return QuantParams{scale.data<float>()[0], integer_at(zero_point, 0)};
}

// `value` quantized to the 8-bit type of `out` (int8 or uint8) with
// `params`, written at out[i].
inline void store_quantized(Tensor& out, std::int64_t i, float value, const QuantParams& params) {
  const float q = std::nearbyint(value / params.scale) + static_cast<float>(params.zero_point);
  if (out.dtype() == DType::kInt8) {
    out.data<std::int8_t>()[i] = saturate<std::int8_t>(q);
  } else {
    out.data<std::uint8_t>()[i] = saturate<std::uint8_t>(q);
  }
}

}  // namespace collage::native
