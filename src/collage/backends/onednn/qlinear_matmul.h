// QLinearMatMul and com.microsoft QGemm as oneDNN's int8 matmul.
//
// A is u8 or s8 with one scale and zero point, B a constant s8 matrix with
// zero points of 0 and one scale or one per column, the result u8 or s8
// with one scale and zero point (QGemm also float32 when it has no y_scale,
// and an int32 C, its bias at the sums' scale). The requantization ratio
// (a_scale * b_scale[n] * alpha / y_scale) is oneDNN's output scale, applied
// in float32: as for the convolutions, a result may land one quantization
// step from the native kernel's.
#pragma once

#include <cstdint>
#include <dnnl.hpp>
#include <vector>

#include "collage/backends/onednn/program.h"
#include "collage/ir/graph.h"
#include "collage/ir/result.h"

namespace collage::onednn {

struct QLinearMatMulSpec {
  ValueId a = kNoValue;
  ValueId b = kNoValue;     // constant, int8
  ValueId bias = kNoValue;  // QGemm's C: constant int32 [N], or kNoValue
  ValueId output = kNoValue;
  // oneDNN dims, all of A's rank; B is read through `b_strides` (a transposed view for transB).
  memory::dims a_dims;
  memory::dims b_dims, b_strides;
  memory::dims dst_dims;
  memory::data_type a_type = memory::data_type::u8;
  memory::data_type dst_type = memory::data_type::u8;
  // One ratio, or one per column.
  std::vector<float> output_scales;
  std::int32_t a_zero_point = 0;
  std::int32_t dst_zero_point = 0;
};

// Decodes a QLinearMatMul or com.microsoft QGemm with a constant B, or says
// why oneDNN cannot run it.
Result<QLinearMatMulSpec> qlinear_matmul_spec(const Graph& graph, const Node& node);

// Adds the int8 matmul primitive computing spec.output.
void emit_qlinear_matmul(ProgramBuilder& builder, const QLinearMatMulSpec& spec);

}  // namespace collage::onednn
