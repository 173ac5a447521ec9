// WindowDims: a resolved window (collage::Window of ir/window.h) as oneDNN's
// convolution, deconvolution and pooling descriptors take it.
//
// The ONNX rules (auto_pad, output sizes, ConvTranspose's output_shape) are
// applied once, in the ir layer; what is left here is oneDNN's spelling:
// memory::dims per spatial dimension, dilations counted from 0, and a
// deconvolution's output_padding folded into its right padding.
#pragma once

#include <dnnl.hpp>

#include "collage/ir/window.h"

namespace collage::onednn {

using dnnl::memory;

struct WindowDims {
  memory::dims kernel;
  memory::dims strides;
  // ONNX convention: 1 is a dense window.
  memory::dims dilations;
  memory::dims padding_l;
  memory::dims padding_r;

  // oneDNN convention: 0 is a dense window.
  memory::dims onednn_dilations() const;
};

// A forward window (Conv, pooling) with the paddings it resolved to.
WindowDims forward_dims(const Window& window);

// A transposed window (ConvTranspose): oneDNN's deconvolution has no
// output_padding, so it becomes negative right padding, which lengthens the
// output by as much.
WindowDims transposed_dims(const Window& window);

}  // namespace collage::onednn
