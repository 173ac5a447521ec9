#include "collage/backends/xnnpack/window_2d.h"

#include <algorithm>
#include <string>
#include <vector>

namespace collage::xnnpack {
namespace {

struct Attributes2d {
  std::vector<std::int64_t> strides;
  std::vector<std::int64_t> dilations;
  std::string auto_pad;
};

std::optional<Attributes2d> read_common(const Node& node) {
  Attributes2d result{node.attributes.get_ints("strides", {1, 1}),
                      node.attributes.get_ints("dilations", {1, 1}),
                      node.attributes.get_string("auto_pad", "NOTSET")};
  if (result.strides.size() != 2 || result.dilations.size() != 2) return std::nullopt;
  for (int i = 0; i < 2; ++i) {
    if (result.strides[i] <= 0 || result.dilations[i] <= 0) return std::nullopt;
  }
  return result;
}

// Explicit pads as [top, left, bottom, right], or nullopt when malformed.
std::optional<std::vector<std::int64_t>> explicit_pads(const Node& node) {
  std::vector<std::int64_t> pads = node.attributes.get_ints("pads", {0, 0, 0, 0});
  if (pads.size() != 4) return std::nullopt;
  if (std::any_of(pads.begin(), pads.end(), [](std::int64_t p) { return p < 0; })) {
    return std::nullopt;
  }
  return pads;
}

}  // namespace

std::optional<Window2d> resolve_window(const Node& node, const Shape& input, const Shape& output,
                                       std::int64_t kernel_h, std::int64_t kernel_w,
                                       bool allow_ceil) {
  if (input.size() != 4 || output.size() != 4 || kernel_h <= 0 || kernel_w <= 0) {
    return std::nullopt;
  }
  auto common = read_common(node);
  if (!common) return std::nullopt;
  const std::int64_t kernel[2] = {kernel_h, kernel_w};
  std::int64_t begin[2] = {0, 0};
  std::int64_t end[2] = {0, 0};
  std::int64_t extra[2] = {0, 0};
  for (int i = 0; i < 2; ++i) {
    const std::int64_t in = input[2 + i];
    const std::int64_t stride = common->strides[i];
    const std::int64_t effective = (kernel[i] - 1) * common->dilations[i] + 1;
    if (common->auto_pad == "SAME_UPPER" || common->auto_pad == "SAME_LOWER") {
      std::int64_t out = (in + stride - 1) / stride;
      std::int64_t total = std::max<std::int64_t>(0, (out - 1) * stride + effective - in);
      // SAME_UPPER puts the odd padding element at the end, SAME_LOWER at the start.
      std::int64_t small = total / 2;
      begin[i] = common->auto_pad == "SAME_UPPER" ? small : total - small;
      end[i] = total - begin[i];
    } else if (common->auto_pad == "NOTSET") {
      auto pads = explicit_pads(node);
      if (!pads) return std::nullopt;
      begin[i] = (*pads)[i];
      end[i] = (*pads)[2 + i];
    } else if (common->auto_pad != "VALID") {
      return std::nullopt;
    }
    const std::int64_t span = in + begin[i] + end[i];
    if (span < effective) return std::nullopt;
    const std::int64_t floor_out = (span - effective) / stride + 1;
    const std::int64_t wanted = output[2 + i];
    if (wanted == floor_out) continue;
    bool ceil_row = allow_ceil && wanted == floor_out + 1 && (wanted - 1) * stride < in + begin[i];
    if (!ceil_row) return std::nullopt;
    extra[i] = (wanted - 1) * stride + effective - span;
    end[i] += extra[i];
  }
  Window2d window;
  window.kernel_h = kernel_h;
  window.kernel_w = kernel_w;
  window.stride_h = common->strides[0];
  window.stride_w = common->strides[1];
  window.dilation_h = common->dilations[0];
  window.dilation_w = common->dilations[1];
  window.pad_top = begin[0];
  window.pad_left = begin[1];
  window.pad_bottom = end[0];
  window.pad_right = end[1];
  window.ceil_extra_bottom = extra[0];
  window.ceil_extra_right = extra[1];
  return window;
}

std::optional<Window2d> resolve_transposed_window(const Node& node, const Shape& input,
                                                  const Shape& output, std::int64_t kernel_h,
                                                  std::int64_t kernel_w) {
  if (input.size() != 4 || output.size() != 4 || kernel_h <= 0 || kernel_w <= 0) {
    return std::nullopt;
  }
  auto common = read_common(node);
  if (!common || node.attributes.has("output_shape")) return std::nullopt;
  std::vector<std::int64_t> pads = {0, 0, 0, 0};
  if (common->auto_pad == "NOTSET") {
    auto explicit_ = explicit_pads(node);
    if (!explicit_) return std::nullopt;
    pads = *explicit_;
  } else if (common->auto_pad != "VALID") {
    return std::nullopt;
  }
  std::vector<std::int64_t> adjustment = node.attributes.get_ints("output_padding", {0, 0});
  if (adjustment.size() != 2) return std::nullopt;
  const std::int64_t kernel[2] = {kernel_h, kernel_w};
  for (int i = 0; i < 2; ++i) {
    // XNNPACK places output_padding rows after the last stride step only.
    if (adjustment[i] < 0 || adjustment[i] >= common->strides[i]) return std::nullopt;
    const std::int64_t effective = (kernel[i] - 1) * common->dilations[i] + 1;
    const std::int64_t out =
        common->strides[i] * (input[2 + i] - 1) + adjustment[i] + effective - pads[i] - pads[2 + i];
    if (out != output[2 + i] || out <= 0) return std::nullopt;
  }
  Window2d window;
  window.kernel_h = kernel_h;
  window.kernel_w = kernel_w;
  window.stride_h = common->strides[0];
  window.stride_w = common->strides[1];
  window.dilation_h = common->dilations[0];
  window.dilation_w = common->dilations[1];
  window.pad_top = pads[0];
  window.pad_left = pads[1];
  window.pad_bottom = pads[2];
  window.pad_right = pads[3];
  window.adjustment_h = adjustment[0];
  window.adjustment_w = adjustment[1];
  return window;
}

}  // namespace collage::xnnpack
