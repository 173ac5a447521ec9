// The quantization parameters of a model's quantized operators, checked at
// import.
//
// A scale of 0, a negative or non-finite scale, a zero point of another
// type than its data or outside that type's range, or a per-axis scale of
// the wrong length makes every result of the op meaningless (or divides by
// zero). They are refused with an Error naming the node and the input,
// rather than computed into infinities or garbage.
#pragma once

#include "collage/ir/graph.h"

namespace collage {

// Checks every QuantizeLinear, DequantizeLinear, QLinearConv,
// QLinearMatMul, ConvInteger, MatMulInteger and com.microsoft QLinear*/QGemm
// node whose parameters are constants (parameters computed at run time,
// such as DynamicQuantizeLinear's, are left to the kernels). Throws Error.
void check_quantization_parameters(const Graph& graph);

}  // namespace collage
