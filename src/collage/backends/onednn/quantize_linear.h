// QuantizeLinear and DequantizeLinear of one scale and zero point as oneDNN
// reorders between float32 and 8-bit values.
//
// A dequantizing reorder subtracts the zero point and multiplies by the
// scale; a quantizing one multiplies by 1/scale, adds the zero point,
// rounds half to even and saturates. Multiplying by 1/scale where ONNX
// divides by the scale may move a result that lies within a rounding error
// of a half step: one quantization step from native's. Either keeps the
// layout its input arrives in.
#pragma once

#include <cstdint>
#include <dnnl.hpp>

#include "collage/backends/onednn/program.h"
#include "collage/ir/graph.h"
#include "collage/ir/result.h"

namespace collage::onednn {

struct QuantizeLinearSpec {
  bool quantize = true;  // QuantizeLinear; else DequantizeLinear
  ValueId input = kNoValue;
  ValueId output = kNoValue;
  float scale = 1.0f;
  std::int32_t zero_point = 0;
};

// Decodes a QuantizeLinear (float32 to int8 or uint8) or DequantizeLinear
// (int8 or uint8 to float32) with a constant scalar scale and zero point, or
// says why oneDNN cannot run it.
Result<QuantizeLinearSpec> quantize_linear_spec(const Graph& graph, const Node& node);

void emit_quantize_linear(ProgramBuilder& builder, const QuantizeLinearSpec& spec);

// The 8-bit `value`, read in `layout`, as float32 real values in that
// layout's format: a new memory a reorder writes, subtracting `zero_point`
// and multiplying by `scale` (for an op that needs its input in float32).
memory dequantized(ProgramBuilder& builder, ValueId value, float scale, std::int32_t zero_point,
                   const memory::desc& layout);

}  // namespace collage::onednn
