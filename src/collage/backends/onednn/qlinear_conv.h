// QLinearConv as oneDNN's int8 convolution, collage's QLinearConvTranspose
// as its int8 deconvolution.
//
// The source is u8 or s8 with one zero point, the weights s8 with zero
// points of 0 (oneDNN's int8 convolutions take no weight zero point), the
// destination u8 or s8 with one zero point, the bias int32 at the scale of
// the sums. The requantization x_scale * w_scale[m] / y_scale is oneDNN's
// output scale (one per output channel when the weights have one scale
// each); the zero points are passed at run time. oneDNN rounds the scaled
// sum to nearest even and saturates, as QLinearConv does, but scales in
// float32 where ONNX's definition multiplies in double: a result may differ
// from the native kernel's by one step where the product falls within
// rounding of a half.
#pragma once

#include <cstdint>
#include <dnnl.hpp>
#include <vector>

#include "collage/backends/onednn/program.h"
#include "collage/backends/onednn/window.h"
#include "collage/ir/graph.h"
#include "collage/ir/result.h"

namespace collage::onednn {

struct QLinearConvSpec {
  bool transposed = false;  // a QLinearConvTranspose
  ValueId input = kNoValue;
  ValueId weights = kNoValue;
  ValueId bias = kNoValue;  // int32 [M], or kNoValue
  ValueId output = kNoValue;
  memory::dim groups = 1;
  memory::dim out_channels = 0;
  memory::dims src_dims;
  memory::dims dst_dims;
  // [g,] O/g, I/g, k... and where they lie in the ONNX weights (row-major
  // for a convolution; a transposed one stores I before O).
  memory::dims weights_dims;
  memory::dims weights_strides;
  WindowDims window;
  memory::data_type src_type = memory::data_type::u8;
  memory::data_type dst_type = memory::data_type::u8;
  // x_scale * w_scale[m] / y_scale: one value, or one per output channel.
  std::vector<float> output_scales;
  std::int32_t src_zero_point = 0;
  std::int32_t dst_zero_point = 0;
};

// Decodes a QLinearConv or QLinearConvTranspose whose weights, scales, zero
// points and bias are constants, or says why oneDNN cannot run it.
Result<QLinearConvSpec> qlinear_conv_spec(const Graph& graph, const Node& node);

// Adds the int8 (de)convolution primitive computing spec.output.
void emit_qlinear_conv(ProgramBuilder& builder, const QLinearConvSpec& spec);

}  // namespace collage::onednn
