// Schemas for the com.microsoft operators of ONNX Runtime's quantized
// (QOperator) models, so that ONNX's type and shape inference types what
// they produce.
//
// ONNX Runtime's quantizer writes QLinearAdd, QLinearMul, QLinearSigmoid,
// QLinearLeakyRelu, QLinearGlobalAveragePool, QLinearAveragePool,
// QLinearConcat and QGemm in the com.microsoft domain (version 1). The ONNX
// library knows neither the domain nor the ops; without a schema, inference
// stops at the first of them and everything after it stays untyped.
#pragma once

namespace collage {

// Registers the domain and the schemas once; later calls do nothing.
void register_microsoft_quantized_schemas();

}  // namespace collage
