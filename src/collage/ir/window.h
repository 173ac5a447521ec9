// Window: the geometry of a sliding-window op (Conv, ConvTranspose, MaxPool,
// AveragePool, LpPool) resolved against static shapes.
//
// ONNX spreads a window over kernel_shape, strides, dilations, pads,
// auto_pad, ceil_mode, output_padding and output_shape, and derives the
// paddings and output sizes from them by rules that differ between forward
// windows (Conv and the pools) and transposed ones (ConvTranspose). Every
// backend needs the same resolved numbers, each in its own representation:
// resolving them here, once, keeps the rules in one place and the backends
// in step with each other.
#pragma once

#include <cstdint>
#include <vector>

#include "collage/ir/graph.h"
#include "collage/ir/result.h"

namespace collage {

// How auto_pad places the padding.
enum class AutoPad { kNotSet, kValid, kSameUpper, kSameLower };

// How a forward window's output size rounds when the stride does not divide
// the padded input: down, or up (ceil_mode) without a last window that
// would start in the end padding (the rule of ONNX and PyTorch).
enum class Rounding { kFloor, kCeil };

// One spatial axis of a window.
//
// Forward (Conv, the pools): output position o reads the input positions
// o * stride - pad_begin + t * dilation, t < kernel; positions outside
// [0, input) are padding.
// Transposed (ConvTranspose): input position i adds to the output positions
// i * stride - pad_begin + t * dilation, t < kernel; pad_begin and pad_end
// are cut from the full result and output_padding is added after it. A
// negative pad adds output positions that only the bias reaches.
struct WindowAxis {
  std::int64_t input = 1;
  std::int64_t output = 1;
  std::int64_t kernel = 1;
  std::int64_t stride = 1;
  // ONNX convention: 1 is a dense window.
  std::int64_t dilation = 1;
  std::int64_t pad_begin = 0;
  std::int64_t pad_end = 0;
  // Transposed windows only.
  std::int64_t output_padding = 0;

  // The span of the dilated kernel: (kernel - 1) * dilation + 1.
  std::int64_t extent() const { return (kernel - 1) * dilation + 1; }
  // Forward windows: how far past the input the last output window reads,
  // (output - 1) * stride + extent - input - pad_begin. At most pad_end
  // when the output size rounds down; a ceil_mode window may read beyond
  // pad_end; negative when the last window ends inside the input.
  std::int64_t end_padding_reached() const;
  // Forward windows: the input position output `o` reads through tap `k`
  // (negative or past the input: padding).
  std::int64_t input_at(std::int64_t o, std::int64_t k) const {
    return o * stride + k * dilation - pad_begin;
  }
  // Forward windows: the outputs [first, last) whose window reads the input
  // (not the padding) through tap `k`, one run along the axis (the
  // position a tap reads moves monotonically with the output); empty
  // (first == last) when the tap reads only padding.
  struct Run {
    std::int64_t first = 0;
    std::int64_t last = 0;
    std::int64_t size() const { return last - first; }
  };
  Run outputs_reading_tap(std::int64_t k) const;
};

// A window over one or more spatial axes, in the order of the tensor's
// spatial dimensions.
struct Window {
  std::vector<WindowAxis> axes;
  AutoPad auto_pad = AutoPad::kNotSet;

  std::size_t rank() const { return axes.size(); }
  // The output size of every axis.
  Shape output_shape() const;
};

// The output size of a forward axis with its paddings: the number of window
// positions that fit in the padded input, 0 when not even one does.
std::int64_t forward_output_size(const WindowAxis& axis, Rounding rounding);

// The window of a forward op (Conv, MaxPool, AveragePool, LpPool) whose data
// input has the spatial sizes `input` and whose kernel has the spatial sizes
// `kernel` (the weights' for a convolution, kernel_shape for a pool). Reads
// strides, dilations, pads, auto_pad, kernel_shape (which must agree with
// `kernel` when present) and, for the pools, ceil_mode. SAME_UPPER and
// SAME_LOWER give an output of ceil(input / stride) and split the padding
// that needs, the odd element at the end for SAME_UPPER and at the start for
// SAME_LOWER; NOTSET takes the pads as given, VALID pads nothing. A
// malformed attribute (a list of the wrong length or type, a kernel, stride
// or dilation below 1, a negative pad, an unknown auto_pad) is a Failure
// naming the op and the attribute.
Result<Window> forward_window(const Node& node, const Shape& input, const Shape& kernel);

// The window of a ConvTranspose node; `kernel` is the weights' spatial
// shape. Reads strides, dilations, pads, auto_pad, kernel_shape,
// output_padding and output_shape. The full result of an axis is
// stride * (input - 1) + output_padding + extent. The output is
// output_shape when given (its last `input.size()` values), input * stride
// for SAME_UPPER and SAME_LOWER, and otherwise the full result less the
// pads (none for VALID). Where the output is given, the padding follows
// from it: total = full result - output, split with the odd element at the
// end for SAME_UPPER and at the start otherwise (NOTSET, VALID,
// SAME_LOWER). Halves round down, as in ONNX's reference implementation:
// an odd negative total (an output larger than the full result) adds its
// extra row at the end for NOTSET, VALID and SAME_LOWER and at the start
// for SAME_UPPER. Failures as for forward_window, and output_padding below
// 0 or an output_shape shorter than the spatial rank.
Result<Window> transposed_window(const Node& node, const Shape& input, const Shape& kernel);

// forward_window and transposed_window for the kernels that must run the
// node: a malformed attribute throws Error naming the node and the attribute.
Window forward_window_or_throw(const Node& node, const Shape& input, const Shape& kernel);
Window transposed_window_or_throw(const Node& node, const Shape& input, const Shape& kernel);

}  // namespace collage
