// Softmax: ONNX Softmax and LogSoftmax as oneDNN softmax (v2), and
// com.microsoft QLinearSoftmax as a dequantizing reorder and a softmax that
// writes 8-bit values (its output scale 1 / y_scale; this oneDNN's softmax
// takes no zero point, so only a y zero point of 0 is claimed).
//
// The axis means different things by opset: before 13 the input is coerced
// to a matrix [prod(dims before axis), prod(dims from axis)] and normalized
// over its rows; from 13 on only the one axis is normalized. Both become a
// oneDNN softmax over one axis of a (possibly reshaped) plain tensor.
#pragma once

#include <cstdint>
#include <dnnl.hpp>

#include "collage/backends/onednn/program.h"
#include "collage/ir/graph.h"
#include "collage/ir/result.h"

namespace collage::onednn {

struct SoftmaxSpec {
  bool log = false;
  ValueId input = kNoValue;
  ValueId output = kNoValue;
  memory::dims dims;
  int axis = 0;
  // A QLinearSoftmax: 8-bit input and output of these types and scales.
  bool quantized = false;
  memory::data_type src_type = memory::data_type::f32;
  memory::data_type dst_type = memory::data_type::f32;
  float x_scale = 1.0f;
  std::int32_t x_zero_point = 0;
  float y_scale = 1.0f;
};

Result<SoftmaxSpec> softmax_spec(const Graph& graph, const Node& node);

void emit_softmax(ProgramBuilder& builder, const SoftmaxSpec& spec);

}  // namespace collage::onednn
