// com.microsoft QLinearAdd, QLinearMul, QLinearSigmoid and QLinearLeakyRelu,
// and collage's QLinearHardSwish and QLinearHardSigmoid, as one oneDNN
// binary primitive each, on 8-bit values.
//
// A quantized value q of scale s and zero point z stands for s·(q − z). The
// binary primitive scales each source by its own factor (per-argument
// scales) and computes in float32; post-ops apply the rest, the last an
// eltwise_linear that maps the result onto the output's scale and zero
// point, and the store rounds and saturates to 8 bits.
// - An addition folds both zero points into that last shift:
//   y = (s_a·a + s_b·b)/s_y + z_y − (s_a·z_a + s_b·z_b)/s_y.
// - A product adds the constant −s_a·z_a to s_a·a and multiplies by b in a
//   binary post-op: by b's 8-bit values when b's zero point is 0 (of two
//   full operands, b is the one with that zero point, as a sigmoid's result
//   in a swish), else by its real values, dequantized by a reorder.
// - A sigmoid, leaky ReLU, hard swish or hard sigmoid adds the same constant and applies the
// function
//   as an eltwise post-op (oneDNN's eltwise primitive takes no 8-bit values
//   for these; one binary primitive is twice as fast as a dequantizing
//   reorder, a float32 eltwise and a quantizing reorder).
// Float32 rounding happens in another order than native's
// dequantize-compute-quantize: a result may land one quantization step from
// native's.
#pragma once

#include <cstdint>
#include <dnnl.hpp>
#include <vector>

#include "collage/backends/onednn/eltwise.h"
#include "collage/backends/onednn/program.h"
#include "collage/ir/graph.h"
#include "collage/ir/result.h"

namespace collage::onednn {

struct QLinearBinarySpec {
  struct Operand {
    ValueId value = kNoValue;
    float scale = 1.0f;
    std::int32_t zero_point = 0;
  };
  dnnl::algorithm algorithm = dnnl::algorithm::binary_add;
  // a has the output's shape; b broadcasts to it.
  Operand a;
  Operand b;
  Operand y;
  memory::data_type type = memory::data_type::u8;  // the output's
};

// Decodes a com.microsoft QLinearAdd or QLinearMul with constant scalar
// scales and zero points, or says why oneDNN cannot run it.
Result<QLinearBinarySpec> qlinear_binary_spec(const Graph& graph, const Node& node);

void emit_qlinear_binary(ProgramBuilder& builder, const QLinearBinarySpec& spec);

struct QLinearUnarySpec {
  // The function as oneDNN eltwise steps (a hard sigmoid is a linear step
  // then a clip).
  std::vector<EltwiseStep> steps;
  QLinearBinarySpec::Operand x;
  QLinearBinarySpec::Operand y;
  memory::data_type type = memory::data_type::u8;  // the output's
};

// Decodes a com.microsoft QLinearSigmoid or QLinearLeakyRelu, or a
// collage QLinearHardSwish or QLinearHardSigmoid, with constant
// scalar scales and zero points, or says why oneDNN cannot run it.
Result<QLinearUnarySpec> qlinear_unary_spec(const Graph& graph, const Node& node);

void emit_qlinear_unary(ProgramBuilder& builder, const QLinearUnarySpec& spec);

}  // namespace collage::onednn
