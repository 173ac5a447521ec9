// Window: the sliding-window attributes Conv, ConvTranspose and pooling share.
//
// ONNX spreads a window's geometry over strides, dilations, pads and
// auto_pad; oneDNN wants explicit left and right paddings per spatial
// dimension and dilations counted from 0. Decoding it in one place keeps the
// convolution and pooling builders (and their support predicates) in step.
#pragma once

#include <dnnl.hpp>
#include <string>

#include "collage/ir/graph.h"
#include "collage/ir/result.h"

namespace collage::onednn {

using dnnl::memory;

struct Window {
  memory::dims kernel;
  memory::dims strides;
  // ONNX convention: 1 is a dense window.
  memory::dims dilations;
  memory::dims padding_l;
  memory::dims padding_r;
  std::string auto_pad;

  // oneDNN convention: 0 is a dense window.
  memory::dims onednn_dilations() const;
  // The extent of the dilated kernel in dimension i.
  memory::dim extent(std::size_t i) const { return (kernel[i] - 1) * dilations[i] + 1; }
};

// Reads strides, dilations, pads and auto_pad of `node` for a window of
// `kernel` (one extent per spatial dimension) and checks their sizes.
// Paddings are the declared ones; auto_pad is not resolved yet.
Result<Window> read_window(const Node& node, const memory::dims& kernel);

// Resolves auto_pad of a forward window (Conv, pooling) for the given
// spatial input and output sizes, the way ONNX defines SAME_UPPER,
// SAME_LOWER and VALID.
void resolve_forward_auto_pad(Window& window, const memory::dims& in, const memory::dims& out);

// The output size of a forward window: floor((in + pads - extent) / stride) + 1.
memory::dim forward_output_size(const Window& window, std::size_t i, memory::dim in);

}  // namespace collage::onednn
