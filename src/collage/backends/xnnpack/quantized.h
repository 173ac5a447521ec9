// Quantized values: how the XNNPACK backend holds 8-bit tensors and which
// quantized ops it runs.
//
// Inside a subgraph an 8-bit value is XNNPACK's qint8 (signed) with one
// scale and zero point. A uint8 value is held shifted by 128: its bytes are
// flipped in the sign bit at the partition's edges (x - 128 as int8) and its
// zero point lowered by 128, which represents the same real numbers exactly.
// This XNNPACK's signed kernels are the only ones that take channel-wise
// weights (qcint8), the form both ONNX Runtime's quantizer and PyTorch write,
// so one signed path serves u8 and s8 models alike. A partition without such
// weights (the QLinearAdd, pooling and Q/DQ between another backend's
// convolutions) whose 8-bit values are all uint8 keeps them as quint8
// instead, and its edges are copied as they are.
//
// An 8-bit value's scale and zero point are not in its type: they are
// inputs of the quantized ops that write or read it. plan_quantization reads
// them off every such op of a partition (QuantizeLinear's output,
// QLinearConv's input and output, ...) and carries them through the ops that
// move 8-bit values without requantizing (MaxPool, reshapes, bilinear Resize); a partition in
// which one value would need two quantizations does not compile, and values
// only such ops touch (a MaxPool of 8-bit values on its own) share any one.
//
// XNNPACK requantizes in float32 (scale products and the final rounding to
// nearest even), where ONNX's definitions compute the ratio in double: a
// result within float error of a half can land one quantization step from
// the native kernel's, the tolerance the backend's outputs are checked with.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "collage/ir/graph.h"
#include "collage/ir/result.h"

namespace collage::xnnpack {

// An 8-bit value as XNNPACK's qint8 or quint8: real = scale * (q - zero_point).
struct Quantization {
  float scale = 1.0f;
  // In the stored type's domain (a shifted uint8's zero point minus 128).
  std::int32_t zero_point = 0;
  // The ONNX value is uint8, held as int8 shifted by 128.
  bool shifted = false;
  // Held as XNNPACK's quint8 (a uint8 value as it is).
  bool unsigned_storage = false;

  friend bool operator==(const Quantization&, const Quantization&) = default;
};

// Whether `type` is an 8-bit (int8 or uint8) tensor XNNPACK can hold.
bool is_eight_bit(const TensorType& type);

// The quantization of `value` given by a scale input and an optional zero
// point input of `node` (both constant scalars, the scale positive and
// finite, the zero point of the value's type); nullopt otherwise.
std::optional<Quantization> quantization_of(const Graph& graph, const Node& node,
                                            std::size_t scale_input, std::size_t zero_input,
                                            ValueId value);

// The quantization of every 8-bit value of `partition` (nullopt for the
// others); a Failure naming the value when two ops disagree on one.
Result<std::vector<std::optional<Quantization>>> plan_quantization(const Graph& partition);

// The support checks of the quantized ops (op_table.h rows); each decodes the
// node as its emitter does.

// QuantizeLinear (float32 to int8/uint8) and DequantizeLinear (back), one
// scale and zero point.
bool is_quantize_or_dequantize(const Graph& graph, const Node& node);
// QLinearConv: 2-D, int8 weights with zero points of 0 (one scale, or one per
// output channel), an int32 bias.
bool is_qlinear_conv(const Graph& graph, const Node& node);
// collage's QLinearConvTranspose: 2-D, int8 weights with one scale and zero
// point 0, an int32 bias.
bool is_qlinear_conv_transpose(const Graph& graph, const Node& node);
// com.microsoft QLinearAdd and QLinearMul, broadcasting.
bool is_qlinear_binary(const Graph& graph, const Node& node);
// com.microsoft QLinearGlobalAveragePool over NCHW.
bool is_qlinear_global_average_pool(const Graph& graph, const Node& node);
// com.microsoft QLinearSigmoid and QLinearLeakyRelu, collage QLinearHardSwish and
// QLinearHardSigmoid.
bool is_qlinear_unary(const Graph& graph, const Node& node);
// com.microsoft QLinearAveragePool over NCHW, 2-D, as AveragePool's window.
bool is_qlinear_average_pool(const Graph& graph, const Node& node);
// Whether this XNNPACK's int8 sigmoid writes `y` itself: scale 1/256 and
// the zero point of 0 as a uint8 (-128 held shifted); else the sigmoid runs
// in float32 between converts.
bool int8_sigmoid_writes(const Quantization& y);
// com.microsoft QGemm (alpha 1, no transA, an 8-bit output) and QLinearMatMul
// of a 2-D activation by a constant 2-D int8 matrix with zero points of 0.
bool is_qlinear_matmul(const Graph& graph, const Node& node);
// MaxPool, reshapes and bilinear Resize of 8-bit values, which keep their quantization.
bool is_eight_bit_passthrough(const Graph& graph, const Node& node);

// Whether `node` is one of the com.microsoft quantized ops above, or
// collage's QLinearHardSwish, QLinearHardSigmoid or QLinearConvTranspose.
bool is_other_domain_quantized_op(const Node& node);

// The weight scales of a QLinearConv, QGemm or QLinearMatMul, one per output
// channel (a single scale repeated), from input `scale_input`.
std::vector<float> weight_scales(const Graph& graph, const Node& node, std::size_t scale_input,
                                 std::size_t channels);

// The constant behind input `i` of `node`; null when absent or computed.
const Tensor* constant_at(const Graph& graph, const Node& node, std::size_t i);

}  // namespace collage::xnnpack
