#include "collage/backends/xnnpack/window_2d.h"

#include <algorithm>

#include "collage/ir/window.h"

namespace collage::xnnpack {
namespace {

// The height and width axes of a resolved window as XNNPACK's numbers.
Window2d window_2d(const WindowAxis& h, const WindowAxis& w) {
  Window2d window;
  window.kernel_h = h.kernel;
  window.kernel_w = w.kernel;
  window.stride_h = h.stride;
  window.stride_w = w.stride;
  window.dilation_h = h.dilation;
  window.dilation_w = w.dilation;
  window.extent_h = h.extent();
  window.extent_w = w.extent();
  window.pad_top = h.pad_begin;
  window.pad_left = w.pad_begin;
  window.pad_bottom = h.pad_end;
  window.pad_right = w.pad_end;
  window.adjustment_h = h.output_padding;
  window.adjustment_w = w.output_padding;
  return window;
}

}  // namespace

std::optional<Window2d> resolve_window(const Node& node, const Shape& input, const Shape& output,
                                       std::int64_t kernel_h, std::int64_t kernel_w,
                                       bool allow_ceil) {
  if (input.size() != 4 || output.size() != 4) return std::nullopt;
  Result<Window> window = forward_window(node, {input[2], input[3]}, {kernel_h, kernel_w});
  if (!window) return std::nullopt;
  for (std::size_t i = 0; i < 2; ++i) {
    WindowAxis& axis = window->axes[i];
    // Not even one window fits the padded input.
    if (axis.output < 1) return std::nullopt;
    const std::int64_t wanted = output[2 + i];
    if (wanted == axis.output) continue;
    if (!allow_ceil || wanted != forward_output_size(axis, Rounding::kCeil)) return std::nullopt;
    axis.output = wanted;
  }
  const WindowAxis& h = window->axes[0];
  const WindowAxis& w = window->axes[1];
  Window2d result = window_2d(h, w);
  // XNNPACK's output size rounds down: a ceil_mode row needs the padding it reads.
  result.ceil_extra_bottom = std::max<std::int64_t>(0, h.end_padding_reached() - h.pad_end);
  result.ceil_extra_right = std::max<std::int64_t>(0, w.end_padding_reached() - w.pad_end);
  result.pad_bottom += result.ceil_extra_bottom;
  result.pad_right += result.ceil_extra_right;
  return result;
}

std::optional<Window2d> resolve_transposed_window(const Node& node, const Shape& input,
                                                  const Shape& output, std::int64_t kernel_h,
                                                  std::int64_t kernel_w) {
  if (input.size() != 4 || output.size() != 4) return std::nullopt;
  // Pads derived from output_shape or SAME_* may be negative, which XNNPACK
  // cannot express; only explicit ones are taken.
  if (node.attributes.has("output_shape")) return std::nullopt;
  Result<Window> window = transposed_window(node, {input[2], input[3]}, {kernel_h, kernel_w});
  if (!window) return std::nullopt;
  if (window->auto_pad == AutoPad::kSameUpper || window->auto_pad == AutoPad::kSameLower) {
    return std::nullopt;
  }
  for (std::size_t i = 0; i < 2; ++i) {
    const WindowAxis& axis = window->axes[i];
    // XNNPACK places output_padding rows after the last stride step only.
    if (axis.output_padding >= axis.stride) return std::nullopt;
    if (axis.output != output[2 + i] || axis.output <= 0) return std::nullopt;
  }
  return window_2d(window->axes[0], window->axes[1]);
}

}  // namespace collage::xnnpack
