// A convolution's ONNX weights (OIHW) in the order XNNPACK's definitions
// take them: [1, kH, kW, M] for a depthwise convolution, OHWI otherwise; a
// transposed convolution's ([C, M/group, kH, kW]) as [M, kH, kW, C/group].
// Float and int8 weights share it.
#pragma once

#include <cstddef>
#include <vector>

#include "collage/ir/tensor_type.h"

namespace collage::xnnpack {

// The filter dims XNNPACK gets for weights of shape `w_shape`.
inline std::vector<std::size_t> filter_dims(const Shape& w_shape, bool depthwise) {
  const auto out_channels = static_cast<std::size_t>(w_shape[0]);
  const auto group_channels = static_cast<std::size_t>(w_shape[1]);
  const auto kh = static_cast<std::size_t>(w_shape[2]);
  const auto kw = static_cast<std::size_t>(w_shape[3]);
  if (depthwise) return {1, kh, kw, out_channels};
  return {out_channels, kh, kw, group_channels};
}

// The weights reordered into filter_dims order.
template <typename T>
std::vector<T> filter_in_xnnpack_order(const T* weights, const Shape& w_shape, bool depthwise) {
  const auto out_channels = static_cast<std::size_t>(w_shape[0]);
  const auto group_channels = static_cast<std::size_t>(w_shape[1]);
  const auto taps = static_cast<std::size_t>(w_shape[2] * w_shape[3]);
  std::vector<T> filter(out_channels * group_channels * taps);
  for (std::size_t m = 0; m < out_channels; ++m) {
    for (std::size_t c = 0; c < group_channels; ++c) {
      for (std::size_t i = 0; i < taps; ++i) {
        const T w = weights[(m * group_channels + c) * taps + i];
        // Depthwise has one input channel per group (c == 0).
        filter[depthwise ? i * out_channels + m : (m * taps + i) * group_channels + c] = w;
      }
    }
  }
  return filter;
}

// A ConvTranspose's sizes, from its weights [C, M/group, kH, kW].
struct TransposeGeometry {
  std::size_t group, group_channels, group_out_channels, out_channels, kh, kw;
};

inline TransposeGeometry transpose_geometry(const Shape& w_shape, std::size_t group) {
  const auto group_out_channels = static_cast<std::size_t>(w_shape[1]);
  return TransposeGeometry{.group = group,
                           .group_channels = static_cast<std::size_t>(w_shape[0]) / group,
                           .group_out_channels = group_out_channels,
                           .out_channels = group_out_channels * group,
                           .kh = static_cast<std::size_t>(w_shape[2]),
                           .kw = static_cast<std::size_t>(w_shape[3])};
}

// A ConvTranspose's weights as XNNPACK's filter [M, kH, kW, C/group],
// output channels grouped.
template <typename T>
std::vector<T> conv_transpose_filter(const T* weights, const TransposeGeometry& t) {
  const std::size_t taps = t.kh * t.kw;
  std::vector<T> filter(t.out_channels * taps * t.group_channels);
  for (std::size_t g = 0; g < t.group; ++g) {
    for (std::size_t c = 0; c < t.group_channels; ++c) {
      for (std::size_t o = 0; o < t.group_out_channels; ++o) {
        for (std::size_t i = 0; i < taps; ++i) {
          const std::size_t m = g * t.group_out_channels + o;
          filter[(m * taps + i) * t.group_channels + c] =
              weights[((g * t.group_channels + c) * t.group_out_channels + o) * taps + i];
        }
      }
    }
  }
  return filter;
}

}  // namespace collage::xnnpack
