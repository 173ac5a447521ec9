// Softmax: ONNX Softmax and LogSoftmax as oneDNN softmax (v2).
//
// The axis means different things by opset: before 13 the input is coerced
// to a matrix [prod(dims before axis), prod(dims from axis)] and normalized
// over its rows; from 13 on only the one axis is normalized. Both become a
// oneDNN softmax over one axis of a (possibly reshaped) plain tensor.
#pragma once

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
};

Result<SoftmaxSpec> softmax_spec(const Graph& graph, const Node& node);

void emit_softmax(ProgramBuilder& builder, const SoftmaxSpec& spec);

}  // namespace collage::onednn
