// Window2d: the geometry of a 2-D sliding-window op as XNNPACK takes it.
//
// The ONNX rules (auto_pad, ceil_mode, output sizes) are applied once, in
// the ir layer (collage::Window, ir/window.h); XNNPACK wants the result as
// four explicit paddings, and computes output sizes with a floor. Resolving
// a node's window against its static input and output shapes here lets the
// support predicate and the subgraph builder agree on the same numbers. A
// ceil_mode output row becomes extra end padding, which pooling ignores.
#pragma once

#include <cstdint>
#include <optional>

#include "collage/ir/graph.h"

namespace collage::xnnpack {

struct Window2d {
  std::int64_t kernel_h = 1;
  std::int64_t kernel_w = 1;
  std::int64_t stride_h = 1;
  std::int64_t stride_w = 1;
  std::int64_t dilation_h = 1;
  std::int64_t dilation_w = 1;
  // The dilated kernel's span.
  std::int64_t extent_h = 1;
  std::int64_t extent_w = 1;
  std::int64_t pad_top = 0;
  std::int64_t pad_left = 0;
  std::int64_t pad_bottom = 0;
  std::int64_t pad_right = 0;
  // The part of pad_bottom / pad_right that ceil_mode added beyond the
  // node's own pads (not zeros the op may count).
  std::int64_t ceil_extra_bottom = 0;
  std::int64_t ceil_extra_right = 0;
  // ConvTranspose's output_padding: extra output rows / columns at the end.
  std::int64_t adjustment_h = 0;
  std::int64_t adjustment_w = 0;

  bool has_padding() const { return pad_top + pad_left + pad_bottom + pad_right > 0; }
};

// The window of a Conv, MaxPool or AveragePool node whose data input has the
// 4-D shape `input` and whose output has the 4-D shape `output`. `kernel_h`
// and `kernel_w` come from the weights (Conv) or kernel_shape (pools). Returns
// nullopt when an attribute is not 2-D or not positive, or when the output
// shape is not what the window gives (a ceil_mode output row is accepted
// when `allow_ceil` and every window still starts inside the padded input).
std::optional<Window2d> resolve_window(const Node& node, const Shape& input, const Shape& output,
                                       std::int64_t kernel_h, std::int64_t kernel_w,
                                       bool allow_ceil);

// The window of a ConvTranspose node with explicit pads (auto_pad NOTSET or
// VALID, no output_shape). nullopt when the output shape does not match or output_padding is not
// smaller than the stride.
std::optional<Window2d> resolve_transposed_window(const Node& node, const Shape& input,
                                                  const Shape& output, std::int64_t kernel_h,
                                                  std::int64_t kernel_w);

}  // namespace collage::xnnpack
