// QDQ units become quantized ops: a convolution one QLinearConv, an
// addition one QLinearAdd, a product one QLinearMul, a sigmoid, leaky ReLU
// or average pooling its QLinear op, a concatenation one QLinearConcat, a
// pooling or reshaping between a cancelling DequantizeLinear/QuantizeLinear
// pair the op on the quantized values.
//
// QDQ models (ONNX Runtime's quantize_static, PyTorch's and TensorRT's
// exports) spell a quantized convolution as DequantizeLinear on the input
// and on int8 weights, a float Conv (an int32 bias behind its own
// DequantizeLinear, or a float one), maybe a Relu, and QuantizeLinear on the
// result. Inference engines run such a unit as one int8 convolution; so
// does this pass, so that backends with int8 kernels (oneDNN) can claim it.
// The unit's result may differ from the float spelling by one quantization
// step where a value falls within float rounding of a half (the int32 sum
// is exact, the float one is not); a float bias is rounded to the sums'
// scale x_scale * w_scale[m], as quantizers do. A Relu or Clip folds in
// only where quantizing clamps to its bounds anyway (the quantized lower
// bound is the type's lowest value, the upper one its highest), so that it
// changes nothing.
#pragma once

#include "collage/ir/graph.h"

namespace collage {

// Rewrites every DequantizeLinear -> Conv [-> Relu/Clip] -> QuantizeLinear unit
// whose weights, scales, zero points and bias are constants (one scale for
// the input and the output, one or one per output channel for the weights)
// into a QLinearConv writing the QuantizeLinear's output. Prunes when
// anything changed. Returns the count.
int fuse_quantized_convolutions(Graph& graph);

// The same for DequantizeLinear -> ConvTranspose [-> Relu/Clip] ->
// QuantizeLinear: collage's QLinearConvTranspose (domain "collage"; ONNX
// has no quantized transposed convolution), with QLinearConv's inputs and
// ConvTranspose's attributes. Its weights [C, M/group, k...] have one scale,
// or one per index of axis 1 (an output channel of a group, as a
// DequantizeLinear with axis 1 gives them: every group uses the same ones).
int fuse_quantized_conv_transposes(Graph& graph);

// The same for DequantizeLinear -> MatMul [-> Relu/Clip] -> QuantizeLinear
// with constant 8-bit weights of rank 2 (one scale, or one per column):
// a QLinearMatMul.
int fuse_quantized_matmuls(Graph& graph);

// The same for DequantizeLinear -> Gemm [-> Relu/Clip] -> QuantizeLinear
// (PyTorch's quantized Linear) with constant 8-bit weights (one scale, or
// one per output column) and a bias as float or as int32 at the sums'
// scale, beta 1: a com.microsoft QGemm, which keeps alpha, transA and
// transB.
int fuse_quantized_gemms(Graph& graph);

// Rewrites DequantizeLinear -> MaxPool (or Reshape, Flatten, Transpose,
// Squeeze, Unsqueeze, Resize) -> QuantizeLinear with the same scale and
// zero point on both sides into the op on the quantized values: the pair
// cancels. Every value the others write is one they read, so the result is
// exact; a Resize's interpolating modes blend values with weights that sum
// to 1, which commutes with the pair's affine map, so its result is the
// spelling's up to float32 rounding (one step where a value lies within a
// rounding error of a half step). Prunes when anything changed. Returns the
// count.
int move_quantized_values(Graph& graph);

// Rewrites DequantizeLinear(a), DequantizeLinear(b) -> Add [-> Relu/Clip] ->
// QuantizeLinear, with one scale and zero point each, into the
// com.microsoft QLinearAdd of ONNX Runtime's quantized models (dequantize,
// add in float32, quantize: what the spelling computes, so exact; a Relu or
// Clip folds in as for the convolutions). Prunes when anything changed. Returns
// the count.
int fuse_quantized_adds(Graph& graph);

// The same for Mul: the com.microsoft QLinearMul.
int fuse_quantized_muls(Graph& graph);

// Rewrites DequantizeLinear (one scale and zero point) -> Sigmoid,
// LeakyRelu, HardSwish, HardSigmoid, Softmax, GlobalAveragePool or
// AveragePool -> QuantizeLinear into the com.microsoft QLinearSigmoid,
// QLinearLeakyRelu, QLinearSoftmax (its `opset` attribute the graph's),
// QLinearGlobalAveragePool or QLinearAveragePool ONNX Runtime's quantized
// models hold, or collage's own QLinearHardSwish and QLinearHardSigmoid
// (domain "collage", inputs as QLinearSigmoid's, HardSigmoid's alpha and
// beta), which ONNX Runtime lacks. Pooling is exact; a sigmoid, leaky ReLU,
// hard swish or hard sigmoid of the 256 input values is computed once, in
// float32 as the spelling does, so a value within float error of a half step
// may round to the other neighbour; a softmax is the float op between
// dequantizing and quantizing. Prunes when anything changed. Returns
// the count.
int fuse_quantized_unaries(Graph& graph);

// Rewrites a Concat whose inputs are each a DequantizeLinear (one scale and
// zero point each) and whose output only a QuantizeLinear reads into the
// com.microsoft QLinearConcat (each input requantized to the output's
// parameters: what the spelling computes). Prunes when anything changed.
// Returns the count.
int fuse_quantized_concats(Graph& graph);

}  // namespace collage
